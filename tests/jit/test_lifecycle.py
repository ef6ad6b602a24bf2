"""The recording life cycle (jit.lifecycle): the moves it has, the ones it refuses, and blacklisting."""

import threading

import pytest

from jit.lifecycle import IllegalTransition, Lifecycle, Phase


def test_a_recording_that_compiles_and_installs_comes_back_to_idle() -> None:
    life = Lifecycle()
    assert life.phase is Phase.IDLE and not life.recording
    assert life.start()
    assert life.phase is Phase.RECORDING and life.recording
    life.compile()
    assert life.phase is Phase.COMPILING and life.recording  # no other recording starts while it compiles
    life.installed()
    assert life.phase is Phase.IDLE and not life.recording
    assert life.start()  # a loop header may record another tree (another type map)


@pytest.mark.parametrize("compiled", [False, True])
def test_an_aborted_recording_or_compilation_comes_back_to_idle(compiled: bool) -> None:
    life = Lifecycle()
    life.start()
    if compiled:
        life.compile()
    life.aborted()
    assert life.phase is Phase.IDLE


def test_only_one_recording_at_a_time() -> None:
    life = Lifecycle()
    assert life.start()
    assert not life.start()
    life.compile()
    assert not life.start()


def test_start_is_won_by_one_thread() -> None:
    life = Lifecycle()
    barrier = threading.Barrier(8)
    won: list[bool] = []

    def attempt() -> None:
        barrier.wait()
        won.append(life.start())

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won) == [False] * 7 + [True]


def test_reprobe_is_won_by_one_thread() -> None:
    """Two threads may both see a loop blacklisted and reprobe it: the second does nothing."""
    life = Lifecycle()
    life.blacklist()
    assert life.reprobe() is True and life.phase is Phase.IDLE
    assert life.start()
    assert life.reprobe() is False and life.phase is Phase.RECORDING


@pytest.mark.parametrize(
    ("before", "event"),
    [
        ([], "compile"),
        ([], "installed"),
        ([], "aborted"),
        (["start"], "installed"),
        (["start", "compile"], "compile"),
    ],
)
def test_moves_the_life_cycle_does_not_have_are_bugs(before: list[str], event: str) -> None:
    life = Lifecycle()
    for move in before:
        getattr(life, move)()
    phase = life.phase
    with pytest.raises(IllegalTransition):
        getattr(life, event)()
    assert life.phase is phase


@pytest.mark.parametrize("before", [[], ["start"], ["start", "compile"]])
def test_blacklisting_is_for_good(before: list[str]) -> None:
    life = Lifecycle()
    for move in before:
        getattr(life, move)()
    life.blacklist()
    assert life.blacklisted and not life.recording
    for event in ("compile", "installed", "aborted"):  # a recording under way ends without reviving it
        getattr(life, event)()
        assert life.phase is Phase.BLACKLISTED
    assert not life.start()
