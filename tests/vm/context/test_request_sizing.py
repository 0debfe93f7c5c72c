"""The three sizings of a session request (the caps' estimate in vm/accounting.py, the context
budget's layers in vm/context/assembly.py, the offline backend's simulated window) add up the
same text: ``SessionRequest.sent``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.vm.accounting import estimate
from openprose.vm.backends.base import SessionRequest, Turn
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.context.assembly import Plan
from openprose.vm.context.ladder import Item
from openprose.vm.context.record import LAYERS
from openprose.vm.context.tokens import estimate as tokens_of

# Non-empty texts of a multiple of four characters, so that estimating each text by itself
# (the budget) and all of them at once (the caps, the offline window) round alike.
texts = st.text(min_size=1, max_size=6).map(lambda text: text * 4)


@settings(max_examples=50)
@given(
    system=texts,
    memory=texts,
    summary=texts,
    turn=st.tuples(texts, texts, texts),
    binding=st.tuples(texts, texts),
    prompt=texts,
)
def test_the_three_sizings_agree_when_every_layer_is_sent(
    system: str,
    memory: str,
    summary: str,
    turn: tuple[str, str, str],
    binding: tuple[str, str],
    prompt: str,
) -> None:
    name, text = binding
    plan = Plan(
        request=SessionRequest(prompt=prompt, step="s", system=system),
        memory=memory,
        items=(Item(name=name, text=text, form="verbatim", chars=len(text)),),
        turns=(Turn(prompt=turn[0], answer=turn[1], tools=(turn[2],)),),
        history=summary,
    )
    layers = plan.layers()
    assert all(getattr(layers, layer) > 0 for layer in LAYERS if layer != "reserve")

    request = plan.build()
    backend = OfflineBackend()
    caps, _ = estimate(request, backend)  # the offline backend reserves no output
    window = tokens_of(backend.check_window(request))
    # Where they differ, they always did: the budget's memory layer is the memory's text, not
    # its binding's name; the simulated window counts no binding's name.
    assert caps == layers.sent + tokens_of("memory")
    assert window == layers.sent - tokens_of(name)
