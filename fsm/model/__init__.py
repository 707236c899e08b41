"""The model boundary: what the driver asks of a model, and the one client of the Anthropic API.

:mod:`~fsm.model.protocol` says what a model is (``Model``, ``StreamingModel``); :mod:`~fsm.model.reply` holds a
reply as plain data (``Reply``, ``Usage``), checked from the wire; :mod:`~fsm.model.anthropic` is the only code
that touches the ``anthropic`` SDK (imported lazily); :mod:`~fsm.model.pricing` says what a call cost;
:mod:`~fsm.model.notices` what a call tells while it goes (``ApiRetry``, ``ModelFallback``). This package
sits below ``fsm.core`` and imports nothing of it.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsm.model.anthropic import DEFAULT_MODEL, AnthropicModel
    from fsm.model.notices import ApiRetry, ModelFallback
    from fsm.model.pricing import Price, price_of
    from fsm.model.protocol import Model, OnEvent, StreamingModel
    from fsm.model.reply import CUT_CALL, Block, Message, Reply, Usage
else:  # each name loads on first use (PEP 562), so a command imports only what it uses
    import lazy_loader

    __getattr__, __dir__, _ = lazy_loader.attach(
        __name__,
        submod_attrs={
            "anthropic": ["DEFAULT_MODEL", "AnthropicModel"],
            "notices": ["ApiRetry", "ModelFallback"],
            "pricing": ["Price", "price_of"],
            "protocol": ["Model", "OnEvent", "StreamingModel"],
            "reply": ["CUT_CALL", "Block", "Message", "Reply", "Usage"],
        },
    )

__all__ = [
    "CUT_CALL",
    "DEFAULT_MODEL",
    "AnthropicModel",
    "ApiRetry",
    "Block",
    "Message",
    "Model",
    "ModelFallback",
    "OnEvent",
    "Price",
    "Reply",
    "StreamingModel",
    "Usage",
    "price_of",
]
