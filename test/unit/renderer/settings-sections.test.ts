// Which Settings section the list marks: the one whose heading has risen past the reading line as the
// page scrolls, the last at the page's end, and a section chosen from the list while the page travels
// there and for as long as its heading stays in sight.
import { describe, expect, test } from 'vitest';
import { headingInSight, markedSection, nextMark, SECTION_HEADING_ID, sectionInView, SETTINGS_SECTIONS, type SectionMark, type SectionsView } from '../../../renderer/components/settings-sections';

/** A window 560 px high whose top 130 px the header and list cover; headings 20 px high at these tops. */
function view(tops: number[], options: { atStart?: boolean; atEnd?: boolean; top?: number; height?: number } = {}): SectionsView {
  return {
    headings: tops.map((top) => ({ top, bottom: top + 20 })),
    top: options.top ?? 130,
    height: options.height ?? 560,
    atStart: options.atStart ?? false,
    atEnd: options.atEnd ?? false,
  };
}

// The reading line of that window: 130 + 0.3 × (560 − 130) = 259.
const LINE = 259;

describe('the section being read', () => {
  test('at the top of the page, the first, even before its heading reaches the line', () => {
    expect(sectionInView(view([300, 600, 900], { atStart: true }))).toBe(0);
    expect(sectionInView(view([140, 600, 900], { atStart: true }))).toBe(0);
    // A short first section: the next heading is past the line before anything scrolls (380 × 720).
    expect(sectionInView(view([140, 220, 900], { atStart: true }))).toBe(0);
  });

  test('the last whose heading has risen to the reading line', () => {
    expect(sectionInView(view([-800, -200, LINE, 700]))).toBe(2);
    expect(sectionInView(view([-800, -200, LINE + 1, 700]))).toBe(1);
    // A section longer than the window: its heading long gone above, it is still the one read.
    expect(sectionInView(view([-800, -200, 600, 900]))).toBe(1);
    // Under the sticky bars counts as risen.
    expect(sectionInView(view([-800, 20, 600]))).toBe(1);
  });

  test('at the end of the page, the last, whose heading may never reach the line', () => {
    expect(sectionInView(view([-900, 150, 420], { atEnd: true }))).toBe(2);
    // A page that does not scroll at all is at its start: its first section is read.
    expect(sectionInView(view([140, 300, 420], { atStart: true, atEnd: true }))).toBe(0);
  });

  test('none at all: the first', () => {
    expect(sectionInView(view([]))).toBe(0);
  });

  test('a heading the page does not draw is never the one read', () => {
    expect(sectionInView(view([-400, Infinity, 600]))).toBe(0);
  });
});

describe('a heading in sight', () => {
  test('shows whole below the sticky bars and above the window\'s bottom', () => {
    const v = view([100, 129.5, 300, 540, 545]);
    expect(headingInSight(v, 0)).toBe(false); // under the bars
    expect(headingInSight(v, 1)).toBe(true); // half a pixel under: rounding
    expect(headingInSight(v, 2)).toBe(true);
    expect(headingInSight(v, 3)).toBe(true); // its bottom at the window's
    expect(headingInSight(v, 4)).toBe(false); // cut by the window's bottom
    expect(headingInSight(v, 5)).toBe(false); // no such section
  });
});

describe('the marked section', () => {
  const following: SectionMark = { kind: 'following' };

  test('follows the page as it scrolls', () => {
    const v = view([-800, -200, 200, 700]);
    expect(nextMark(following, { kind: 'moved', view: v })).toEqual(following);
    expect(markedSection(following, v)).toBe(2);
  });

  test('a chosen section is marked at once, while the page travels to it, and while it stays in sight', () => {
    let mark = nextMark(following, { kind: 'chose', index: 5 });
    expect(mark).toEqual({ kind: 'chosen', index: 5, reached: false });
    // On the way (a smooth scroll): its heading still below the window; the page's position would say 1.
    const onTheWay = view([-900, -300, 300, 900, 1500, 2100]);
    mark = nextMark(mark, { kind: 'moved', view: onTheWay });
    expect(markedSection(mark, onTheWay)).toBe(5);
    // There: near the page's end its heading stops low in the window, and it stays marked.
    const there = view([-3000, -2400, -1800, -1200, 100, 420]);
    mark = nextMark(mark, { kind: 'moved', view: there });
    expect(mark).toEqual({ kind: 'chosen', index: 5, reached: true });
    mark = nextMark(mark, { kind: 'moved', view: there });
    expect(markedSection(mark, there)).toBe(5);
    // Scrolled up a little: still in sight, still marked, though section 4's heading is past the line.
    const aLittleUp = view([-2900, -2300, -1700, -1100, 200, 520]);
    mark = nextMark(mark, { kind: 'moved', view: aLittleUp });
    expect(markedSection(mark, aLittleUp)).toBe(5);
    // Scrolled away: the page's position rules again.
    const away = view([-2000, -1400, -800, 200, 1200, 1520]);
    mark = nextMark(mark, { kind: 'moved', view: away });
    expect(mark).toEqual(following);
    expect(markedSection(mark, away)).toBe(3);
  });

  test('the agent scrolling by hand (wheel, touch, keys, the scroll bar) hands the mark back to the page at once', () => {
    const chosen = nextMark(following, { kind: 'chose', index: 2 });
    expect(nextMark(chosen, { kind: 'scrolledByHand' })).toEqual(following);
    const reached = nextMark(chosen, { kind: 'moved', view: view([-900, -300, 200, 900]) });
    expect(reached).toEqual({ kind: 'chosen', index: 2, reached: true });
    expect(nextMark(reached, { kind: 'scrolledByHand' })).toEqual(following);
  });

  test('the page at rest short of the chosen heading keeps it marked: the end of a scroll cut short by the choice comes late', () => {
    const chosen = nextMark(following, { kind: 'chose', index: 4 });
    const short = view([-900, -300, 200, 900, 1500]);
    expect(nextMark(chosen, { kind: 'moved', view: short })).toEqual(chosen);
    expect(markedSection(nextMark(chosen, { kind: 'moved', view: short }), short)).toBe(4);
    // Once in sight: reached; scrolled out of sight after that, the page's position rules again.
    const there = nextMark(chosen, { kind: 'moved', view: view([-900, -300, -100, 50, 142]) });
    expect(there).toEqual({ kind: 'chosen', index: 4, reached: true });
    expect(nextMark(there, { kind: 'moved', view: short })).toEqual(following);
  });

  test('choosing another section while travelling to one marks the new one', () => {
    const first = nextMark(following, { kind: 'chose', index: 6 });
    expect(nextMark(first, { kind: 'chose', index: 1 })).toEqual({ kind: 'chosen', index: 1, reached: false });
  });
});

describe('the sections', () => {
  test('are listed in the page\'s order, each with a heading id of its own', () => {
    expect(SETTINGS_SECTIONS).toEqual(['language', 'account', 'network', 'audio', 'shortcuts', 'calls', 'capture', 'diagnostics', 'updates']);
    const ids = SETTINGS_SECTIONS.map((s) => SECTION_HEADING_ID[s]);
    expect(new Set(ids).size).toBe(ids.length);
    // The ids the accessibility tests and other tools already find the sections by stay as they were.
    expect(SECTION_HEADING_ID).toMatchObject({
      network: 'network-settings-title',
      audio: 'audio-settings-title',
      shortcuts: 'shortcuts-title',
      calls: 'desk-calls-title',
      diagnostics: 'diagnostics-settings-title',
    });
  });
});
