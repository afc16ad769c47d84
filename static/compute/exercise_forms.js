// The forms of the "predict, then reveal" questions (./exercises.js, ./concepts.js): a cell question, a choice
// among options, a number; each with its id, the question, the right values, the answer said, why, and the cell
// that is the evidence.

export const cell = (id, row, col) => ({ id, row, col });
export const indices = (values, keep) => values.flatMap((x, i) => (keep(x) ? [i] : []));

export function exercise(say, step, key, kind, question, why, answerText, evidence, more = {}) {
  return {
    id: say.say("exercise_id", { step, key }),
    step,
    kind,
    question,
    block: null,
    choices: [],
    right: [],
    answer: null,
    tolerance: null,
    answer_text: answerText,
    why,
    evidence,
    ...more,
  };
}

export function options(say, step, key, question, why, choices, right, evidence) {
  const label = Object.fromEntries(choices);
  return exercise(
    say,
    step,
    key,
    "choice",
    question,
    why,
    say.listed(
      "or",
      right.map((r) => ({ label: label[r] })),
    ),
    evidence,
    { choices: choices.map(([value, text]) => ({ value, label: text })), right },
  );
}

export function numberQuestion(say, step, key, question, why, answer, tolerance, evidence, text = null) {
  return exercise(say, step, key, "number", question, why, text ?? say.say("answer_number", { answer }), evidence, {
    answer,
    tolerance,
  });
}
