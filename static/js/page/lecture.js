// The lecture path (content/lecture.yaml, read by article/lecture.py and handed to the page as the data block
// #lecture-path in templates/index.html): about 8 steps for one lecture, each with its minutes, the key line
// presenter mode shows, a question for the room and inputs to try. Presenter mode walks it (present.js), the
// short handout prints it (../handout.js), /lesson is the teacher's page of it.

/** @typedef {{step: number, minutes: number, start: number, key: string, ask: string, tries: number[]}} Stop
 *  @typedef {{title: string, minutes: number, stops: Stop[]}} Lecture */

/** @type {Lecture | null} */
let read;

/** The lecture path, or null on a page without one. @returns {Lecture | null} */
export function lecture() {
  if (read === undefined) {
    const text = document.getElementById("lecture-path")?.textContent;
    try {
      read = text ? JSON.parse(text) : null;
    } catch {
      read = null;
    }
  }
  return read;
}

/** The stop at step n, with its place in the path: {stop, index}; null off the path. */
export function stopAt(n) {
  const stops = lecture()?.stops || [];
  const index = stops.findIndex((s) => s.step === n);
  return index < 0 ? null : { stop: stops[index], index };
}

/** The path's step `by` stops on from step n (−1: the one before), or null past either end. */
export function stepAlong(n, by) {
  const steps = (lecture()?.stops || []).map((s) => s.step);
  const later = steps.filter((s) => s > n),
    earlier = steps.filter((s) => s < n);
  return (by > 0 ? later[0] : earlier[earlier.length - 1]) ?? null;
}
