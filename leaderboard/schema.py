"""The OpenAPI schema's generator (drf-spectacular), fitted to the API's nested serializers."""

from __future__ import annotations

from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema


class AutoSchema(SpectacularAutoSchema):
    """Names each view's nested `InputSerializer`/`OutputSerializer` after the view: every view has its
    own "Output", and drf-spectacular would otherwise merge them into one component."""

    def get_serializer_name(self, serializer: Any, direction: Literal["request", "response"]) -> str:
        outer, _, inner = type(serializer).__qualname__.rpartition(".")
        if outer.endswith("Api") and inner in ("InputSerializer", "OutputSerializer"):
            return outer.removesuffix("Api") + ("Input" if inner == "InputSerializer" else "")
        return super().get_serializer_name(serializer, direction)
