// What the stage says in words around the drawing: the key hints (a lasting overlay: views keep clear
// of it), the message line (what could not be done, for twelve seconds or until clicked), and the
// container's role and name for assistive technology.
const HELP = 'drag: orbit · right-drag: pan · wheel: zoom · Tab and arrow keys: move a cell cursor · Enter: explain the cell · Esc: hide it';
const MESSAGE_MS = 12000;

export function buildHelp() {
  const help = Object.assign(document.createElement('div'), { className: 'stage-help', title: HELP });
  help.append(Object.assign(document.createElement('span'), { className: 'stage-help-keys', textContent: 'O whole machine · C step view · R replay · N numbers · ' }),
    'click a cell: where it comes from');
  help.dataset.coversStage = '';
  return help;
}

export class Messages {
  constructor() {
    this.el = Object.assign(document.createElement('div'), { className: 'stage-message', hidden: true });
    this.el.setAttribute('role', 'alert');
    this.el.addEventListener('click', () => { this.el.hidden = true; });
  }

  show(text) {
    const el = this.el;
    el.textContent = text; el.hidden = false;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { el.hidden = true; }, MESSAGE_MS);
  }
}

/** The stage's role, description, name and focusability, where the page has not set them. */
export function describeStage(el) {
  el.setAttribute('role', el.getAttribute('role') || 'application');
  el.setAttribute('aria-roledescription', 'model stage');
  if (!el.getAttribute('aria-label')) el.setAttribute('aria-label', 'The Transformer, every matrix drawn. Tab and arrow keys move a cell cursor; the inspector reads the cell.');
  if (!el.hasAttribute('tabindex')) el.tabIndex = 0;
}
