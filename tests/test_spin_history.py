"""The scheduler's record of each core's last slice-boundary fingerprints (spin detection) against
the plain list it stands for: the last _SPIN_HISTORY entries, membership, the newest repeating."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tensixsim.scheduler import _SPIN_HISTORY, _Recent

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 80)),
        st.tuples(st.just("clear"), st.none()),
        st.tuples(st.just("keep_last"), st.none()),
    ),
    max_size=400,
)


@given(_OPS)
def test_recent_fingerprints_behave_as_the_bounded_list(ops):
    recent, reference = _Recent(), []
    for op, value in ops:
        if op == "add":
            fingerprint = (value % 7, bytes([value]))
            assert recent.add(fingerprint) == (fingerprint in reference)
            reference.append(fingerprint)
            del reference[:-_SPIN_HISTORY]
        elif op == "clear":
            recent.clear()
            reference.clear()
        else:
            recent.keep_last()
            reference = reference[-1:]
        assert list(recent.order) == reference
        assert recent.last_repeats() == bool(reference and reference[-1] in reference[:-1])
