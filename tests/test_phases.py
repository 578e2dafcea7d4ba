"""`mazerl.core.phases`: what a phase adds up, and nothing outside `measured`."""

from mazerl.core.phases import measured, phase


def test_each_phase_adds_the_clocks_advance_inside_it():
    readings = iter([0.0, 3.0, 10.0, 14.0, 15.0, 20.0])  # in the order the phases read them
    with measured(lambda: next(readings)) as totals:
        with phase("a"):  # 0 -> 3
            pass
        with phase("b"), phase("a"):  # b: 10 -> 20, around an "a" from 14 to 15
            pass
    # a: (3 - 0) + (15 - 14) = 4; b: 20 - 10 = 10 (a nested phase counts in both)
    assert totals == {"a": 4.0, "b": 10.0}


def test_phases_outside_measured_read_no_clock():
    with measured(lambda: 1 / 0) as totals:
        pass
    with phase("a"):  # not measured: the clock above is not called, nothing is added
        pass
    assert totals == {}
