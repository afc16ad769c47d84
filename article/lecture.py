"""The lecture path (content/lecture.yaml): about 8 of the article's steps for one lecture, each with its
minutes, the key line the projector shows, a question for the room and inputs to try. One definition, read
here: the article page hands it to presenter mode and the short handout as data (templates/index.html), and
/lesson prints it as the teacher's one-page plan (templates/lesson.html)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import yaml

LECTURE = Path(__file__).resolve().parents[1] / "content" / "lecture.yaml"


@dataclass(frozen=True)
class Stop:
    step: int
    minutes: int
    start: int  # the minute of the lecture it starts at: the minutes of the stops before it
    key: str
    ask: str
    tries: tuple[int, ...]


@dataclass(frozen=True)
class Lecture:
    title: str
    stops: tuple[Stop, ...]

    @property
    def minutes(self) -> int:
        return sum(s.minutes for s in self.stops)

    def as_data(self) -> dict:
        """For the page: {title, minutes, stops: [{step, minutes, start, key, ask, tries}]}."""
        return {"title": self.title, "minutes": self.minutes, "stops": [asdict(s) for s in self.stops]}


def parse_lecture(doc: dict, steps: int = 29) -> Lecture:
    """The lecture from its YAML document, checked: steps in the article and in order, whole minutes, every
    line written."""
    stops = []
    for s in doc["stops"]:
        stop = Stop(
            step=int(s["step"]),
            minutes=int(s["minutes"]),
            start=sum(x.minutes for x in stops),
            key=str(s["key"]).strip(),
            ask=str(s["ask"]).strip(),
            tries=tuple(int(t) for t in s.get("try", ())),
        )
        if not 1 <= stop.step <= steps or stop.minutes < 1 or not stop.key or not stop.ask:
            raise ValueError(f"content/lecture.yaml: a bad stop {s!r}")
        stops.append(stop)
    if [s.step for s in stops] != sorted({s.step for s in stops}):
        raise ValueError("content/lecture.yaml: the stops' steps must rise, each once")
    return Lecture(title=str(doc["title"]), stops=tuple(stops))


@lru_cache(maxsize=1)
def load_lecture(path: Path = LECTURE) -> Lecture:
    return parse_lecture(yaml.safe_load(path.read_text(encoding="utf-8")))
