"""How every document the app sends becomes bytes: orjson, with the options the API promises.

numpy arrays are written as they are (fast, no lists in between) and −∞ and NaN become null (JSON has
neither: the masked scores of a trace are −∞); dataclasses are written by orjson itself, and the
pydantic documents of app/documents/schemas.py through `model_dump`.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

JSON_OPTIONS = orjson.OPT_SERIALIZE_NUMPY  # −∞ (masked scores) and NaN serialise as null


def _document(obj: Any) -> Any:
    if isinstance(obj, BaseModel):  # app.documents.schemas' documents; dataclasses and numpy orjson writes itself
        return obj.model_dump()
    raise TypeError(f"{type(obj).__name__} is not a document")


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj, default=_document, option=JSON_OPTIONS)
