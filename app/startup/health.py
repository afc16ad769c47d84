"""`/healthz`: each shipped model and data set, usable or not and why (app/service/shipped.py checks the files).

A model loaded in memory is usable whatever happens to its files; one not loaded yet, and every data
set, is usable when its files are as recorded. The service is `ok` only when all are; otherwise
`/healthz` answers 503, so an uptime check sees what the next request (or the next start) would.
"""

from __future__ import annotations

from app.documents.schemas import Availability, Health
from app.service import research_views
from app.service.model_choice import loaded
from app.service.shipped import DATA_SETS, Shipped
from model import models

MODEL_SET = "model "  # the data set of model NAME is "model NAME" (app/service/shipped.py DATA_SETS)


def availability(reason: str, version: str | None = None) -> Availability:
    return (
        Availability(status="not available", reason=reason)
        if reason
        else Availability(status="ok", weights_version=version)
    )


def health_doc(state) -> Health:
    shipped: Shipped = state.shipped
    report = shipped.report()
    in_memory = loaded(state)
    model_status = {}
    for name in models.NAMES:
        hit = in_memory.get(name)
        model_status[name] = (
            availability("", hit.service.version) if hit else availability(report.get(MODEL_SET + name, ""))
        )
    data = {name: availability(report[name]) for name in DATA_SETS if not name.startswith(MODEL_SET)}
    ok = all(a.status == "ok" for a in (*model_status.values(), *data.values()))
    return Health(
        status="ok" if ok else "not ok",
        weights_version=state.service.version,
        models=model_status,
        data=data,
        research_views="outside the manifest" if research_views.outside_manifest() else "shipped",
    )
