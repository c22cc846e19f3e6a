// The Settings screen's sections, as its list ("Settings sections") names them, and which of them the
// agent is reading: the list marks it as the page scrolls, and keeps a section chosen from it marked
// while the page travels there and while it stays in sight.

/** The sections in the page's order: the list shows them in this order. */
export const SETTINGS_SECTIONS = ['language', 'account', 'network', 'audio', 'shortcuts', 'calls', 'capture', 'diagnostics', 'updates'] as const;
export type SettingsSection = (typeof SETTINGS_SECTIONS)[number];

/** Each section's heading: the list's entries point at it, and choosing one moves the focus to it. */
export const SECTION_HEADING_ID: Readonly<Record<SettingsSection, string>> = {
  language: 'language-settings-title',
  account: 'account-settings-title',
  network: 'network-settings-title',
  audio: 'audio-settings-title',
  shortcuts: 'shortcuts-title',
  calls: 'desk-calls-title',
  capture: 'capture-settings-title',
  diagnostics: 'diagnostics-settings-title',
  updates: 'updates-settings-title',
};

/** The page as the window shows it now, in CSS pixels from the top of the window. */
export interface SectionsView {
  /** Each section's heading: its top and bottom, in the list's order. */
  headings: readonly { top: number; bottom: number }[];
  /** Where the part of the window the sticky bars (the header, a narrow window's list) leave uncovered starts. */
  top: number;
  /** The window's height. */
  height: number;
  /** The page cannot scroll further down. */
  atEnd: boolean;
  /** The page cannot scroll further up. */
  atStart: boolean;
}

/**
 * How far down the uncovered part a heading must have come up for its section to be the one read:
 * a heading brought to the top by the list is well past it, one just risen from the bottom is not.
 */
const READING_LINE = 0.3;

/**
 * The section being read: the last whose heading has risen above the reading line. At the page's top
 * the first is, though a short first section lets the next heading rise past the line in a tall
 * window: nothing has been scrolled yet, and the page is read from its start. At the page's end the
 * last section is, as its heading may never reach the line; the first when none has.
 */
export function sectionInView(view: SectionsView): number {
  const last = view.headings.length - 1;
  if (last < 0 || view.atStart) return 0;
  if (view.atEnd) return last;
  const line = view.top + (view.height - view.top) * READING_LINE;
  let reading = 0;
  view.headings.forEach((heading, index) => {
    if (heading.top <= line) reading = index;
  });
  return reading;
}

/** The heading of section `index` shows whole in the uncovered part of the window (a pixel's rounding allowed). */
export function headingInSight(view: SectionsView, index: number): boolean {
  const heading = view.headings[index];
  return heading !== undefined && heading.top >= view.top - 1 && heading.bottom <= view.height + 1;
}

/**
 * What the list marks. `following`: the section in view, as the page scrolls. `chosen`: the one the
 * agent chose from the list, while the page scrolls there (`reached` once its heading is in sight) and
 * for as long as it stays in sight: a section near the page's end, which cannot come up to the
 * reading line, stays the one marked after it was chosen.
 */
export type SectionMark = { kind: 'following' } | { kind: 'chosen'; index: number; reached: boolean };

export type SectionMarkEvent =
  /** A section chosen from the list. */
  | { kind: 'chose'; index: number }
  /** The page scrolled, or its layout changed. */
  | { kind: 'moved'; view: SectionsView }
  /**
   * The agent takes the page over (wheel, touch, a scrolling key, a press on the page's scroll bar):
   * the page's position rules again. Only the agent's own hand says a travel was cut short: the end of
   * a smooth scroll (`scrollend`) may be reported late, once the next one has begun.
   */
  | { kind: 'scrolledByHand' };

export function nextMark(mark: SectionMark, event: SectionMarkEvent): SectionMark {
  switch (event.kind) {
    case 'chose':
      return { kind: 'chosen', index: event.index, reached: false };
    case 'scrolledByHand':
      return { kind: 'following' };
    case 'moved': {
      if (mark.kind === 'following') return mark;
      if (headingInSight(event.view, mark.index)) return mark.reached ? mark : { ...mark, reached: true };
      // Still on its way there (a smooth scroll), or scrolled away from it since.
      return mark.reached ? { kind: 'following' } : mark;
    }
  }
}

/** The section the list marks `aria-current`. */
export function markedSection(mark: SectionMark, view: SectionsView): number {
  return mark.kind === 'chosen' ? mark.index : sectionInView(view);
}
