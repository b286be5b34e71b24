"""One call to Ray's GCS, run by path in a child of the live audit (sweeps/cluster_services.py):
`python sweeps/cluster_gcs_call.py HOST:PORT`. Ray takes its token mode and token from this
process's environment (RAY_AUTH_MODE, RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token).
Prints one word on its last line: `accepted`, `refused` (Ray's AuthenticationError: no token,
or the wrong one) or `error: ...` (anything else: the audit cannot tell)."""

import sys


def main(address: str) -> str:
    from ray._raylet import GcsClient
    from ray.exceptions import AuthenticationError

    try:
        GcsClient(address=address).internal_kv_get(b"xlt-audit", b"xlt-audit", timeout=10)
    except AuthenticationError:
        return "refused"
    except Exception as error:  # noqa: BLE001 - any other failure: the audit cannot tell
        return f"error: {type(error).__name__}"
    return "accepted"


if __name__ == "__main__":
    print(main(sys.argv[1]))
