"""The errors a trial raises on purpose: bad input, named before any expensive work starts,
and a loss that diverged (neither is worth a retry)."""


class ConfigError(ValueError):
    """A trial or sweep setting has a value that is not allowed.

    The message names the field, the value given and what is allowed.
    """

    def __init__(self, field: str, value, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"invalid setting {field}={value!r}: {allowed}")


class DataError(ValueError):
    """A data file or data set is missing or malformed (the message names the file and line)."""


class TrainingDiverged(RuntimeError):
    """The loss stopped being finite (EAR's EPT is unbounded below, for one)."""


def require_one_of(field: str, value, allowed: tuple[str, ...]) -> None:
    """Raise ConfigError naming `field` unless `value` is one of `allowed`."""
    if value not in allowed:
        raise ConfigError(field, value, f"one of {', '.join(allowed)}")
