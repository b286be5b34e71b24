"""`xlt_core.cpus`: a lone trial's torch threads."""

from xlt_core.cpus import THREADS_VARIABLE, available_cpus, torch_threads


def test_threads_asked_for_win(monkeypatch):
    monkeypatch.setenv(THREADS_VARIABLE, "3")
    assert torch_threads(5) == 5


def test_an_explicit_omp_num_threads_is_respected(monkeypatch):
    monkeypatch.setenv(THREADS_VARIABLE, "1")
    assert torch_threads() == 1
    monkeypatch.setenv(THREADS_VARIABLE, " 7 ")
    assert torch_threads(None) == 7


def test_without_a_usable_setting_the_affinity_mask_decides(monkeypatch):
    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    assert torch_threads() == available_cpus()
    for ignored in ("", "0", "-2", "two", "1.5"):
        monkeypatch.setenv(THREADS_VARIABLE, ignored)
        assert torch_threads() == available_cpus(), ignored
