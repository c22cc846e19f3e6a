// Settings → the list of its sections ("Settings sections"): a sticky column beside them in a wide
// window, a row that scrolls sideways under the header in a narrow one. Choosing a section scrolls its
// heading into view and gives it the focus, so that keyboard and screen-reader users land there; the
// entry of the section being read is marked (aria-current) as the page scrolls.
import { useEffect, useRef, useState, type MouseEvent, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { markedSection, nextMark, SECTION_HEADING_ID, SETTINGS_SECTIONS, type SectionMark, type SectionsView, type SettingsSection } from './settings-sections';

/** Keys that scroll the page when the focus is not in a field: the agent takes over from a chosen section. */
const SCROLLING_KEYS: ReadonlySet<string> = new Set(['PageUp', 'PageDown', 'Home', 'End', 'ArrowUp', 'ArrowDown', ' ']);

/** Space kept between a chosen heading and the sticky bars above it. */
const HEADING_GAP_PX = 12;

const scrollBehavior = (): ScrollBehavior => (window.matchMedia('(prefers-reduced-motion: reduce)').matches ? 'instant' : 'smooth');

interface Layout {
  view: SectionsView;
  /** The list is a row above the sections (a narrow window), not a column beside them. */
  asRow: boolean;
  /** The app's sticky header's height. */
  headerHeight: number;
}

/** Where the headings and the sticky bars are now. */
function measure(nav: HTMLElement, sections: HTMLElement): Layout {
  // The app's header (App.tsx) stays at the window's top: a heading brought into view must clear it.
  const header = document.querySelector('.app-header');
  const headerHeight = header?.getBoundingClientRect().height ?? 0;
  const navBox = nav.getBoundingClientRect();
  const sectionsBox = sections.getBoundingClientRect();
  // Above the sections, the list shares their width; beside them, it does not.
  const asRow = navBox.left < sectionsBox.right && navBox.right > sectionsBox.left;
  const top = asRow ? Math.max(headerHeight, navBox.bottom) : headerHeight;
  const scroller = document.scrollingElement ?? document.documentElement;
  const headings = SETTINGS_SECTIONS.map((section) => {
    const box = document.getElementById(SECTION_HEADING_ID[section])?.getBoundingClientRect();
    // A heading not drawn (never so in this screen) counts as far below, so that it is never the one read.
    return box ? { top: box.top, bottom: box.bottom } : { top: Infinity, bottom: Infinity };
  });
  return {
    view: {
      headings,
      top,
      height: window.innerHeight,
      atStart: scroller.scrollTop <= 1,
      atEnd: scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 1,
    },
    asRow,
    headerHeight,
  };
}

/** Sets a custom property only when it changes: this runs on every frame of a scroll. */
function setVariable(el: HTMLElement, name: string, value: string): void {
  if (el.style.getPropertyValue(name) !== value) el.style.setProperty(name, value);
}

/** In a row, the marked entry is scrolled into the row's sight (the window itself does not move). */
function revealInRow(list: HTMLElement, entry: HTMLElement): void {
  const row = list.getBoundingClientRect();
  const box = entry.getBoundingClientRect();
  if (box.left >= row.left && box.right <= row.right) return;
  list.scrollBy({ left: box.left + box.width / 2 - (row.left + row.width / 2), behavior: scrollBehavior() });
}

export function SettingsNav({ screen, sections }: { screen: RefObject<HTMLElement | null>; sections: RefObject<HTMLElement | null> }) {
  const { t } = useTranslation('settings');
  const { t: tCommon } = useTranslation('common');
  const navRef = useRef<HTMLElement>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const mark = useRef<SectionMark>({ kind: 'following' });
  const asRow = useRef(false);
  const [current, setCurrent] = useState(0);

  // Each entry says its section's heading, word for word.
  const titles: Readonly<Record<SettingsSection, string>> = {
    language: tCommon('language.label'),
    account: t('account.title'),
    network: t('network.title'),
    audio: t('audio.title'),
    shortcuts: t('desk.shortcuts.title'),
    calls: t('desk.callsTitle'),
    capture: t('serviceCapture.title'),
    diagnostics: t('diagnostics.title'),
    updates: t('updates.title'),
  };

  useEffect(() => {
    const nav = navRef.current;
    const content = sections.current;
    const root = screen.current;
    if (!nav || !content || !root) return;
    let frame = 0;
    const update = () => {
      const layout = measure(nav, content);
      asRow.current = layout.asRow;
      // The sticky list sits under the header; a chosen heading stops under both (styles.css reads these).
      setVariable(root, '--settings-sticky-top', `${layout.headerHeight}px`);
      setVariable(root, '--settings-heading-margin', `${(layout.asRow ? layout.headerHeight + nav.getBoundingClientRect().height : layout.headerHeight) + HEADING_GAP_PX}px`);
      mark.current = nextMark(mark.current, { kind: 'moved', view: layout.view });
      setCurrent(markedSection(mark.current, layout.view));
    };
    const schedule = () => {
      if (frame === 0)
        frame = requestAnimationFrame(() => {
          frame = 0;
          update();
        });
    };
    const byHand = () => {
      mark.current = nextMark(mark.current, { kind: 'scrolledByHand' });
      schedule();
    };
    const key = (e: KeyboardEvent) => {
      if (SCROLLING_KEYS.has(e.key) && !(e.target instanceof Node && nav.contains(e.target))) byHand();
    };
    // A press on the page's scroll bar reaches the page as a pointerdown on its root element: the agent
    // drags the page. A press in a section (a field, a button) leaves a chosen section marked.
    const pressed = (e: PointerEvent) => {
      if (e.target === document.documentElement) byHand();
    };
    const header = document.querySelector('.app-header');
    const resized = new ResizeObserver(schedule);
    for (const el of [nav, content, header]) if (el) resized.observe(el);
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule);
    window.addEventListener('wheel', byHand, { passive: true });
    window.addEventListener('touchmove', byHand, { passive: true });
    window.addEventListener('keydown', key);
    window.addEventListener('pointerdown', pressed, { passive: true });
    update();
    return () => {
      cancelAnimationFrame(frame);
      resized.disconnect();
      window.removeEventListener('scroll', schedule);
      window.removeEventListener('resize', schedule);
      window.removeEventListener('wheel', byHand);
      window.removeEventListener('touchmove', byHand);
      window.removeEventListener('keydown', key);
      window.removeEventListener('pointerdown', pressed);
    };
  }, [screen, sections]);

  useEffect(() => {
    const list = listRef.current;
    const entry = list?.children[current]?.firstElementChild;
    if (list && asRow.current && entry instanceof HTMLElement) revealInRow(list, entry);
  }, [current]);

  const choose = (index: number, e: MouseEvent<HTMLAnchorElement>) => {
    const section = SETTINGS_SECTIONS[index];
    const heading = section && document.getElementById(SECTION_HEADING_ID[section]);
    if (!heading) return;
    // The page moves itself, smoothly unless less motion is asked for; the address stays as it is.
    e.preventDefault();
    mark.current = nextMark(mark.current, { kind: 'chose', index });
    setCurrent(index);
    heading.focus({ preventScroll: true });
    heading.scrollIntoView({ block: 'start', behavior: scrollBehavior() });
  };

  return (
    <nav ref={navRef} className="settings-nav" aria-label={t('screen.sections')}>
      <ul ref={listRef} className="settings-nav-list">
        {SETTINGS_SECTIONS.map((section, index) => (
          <li key={section}>
            <a href={`#${SECTION_HEADING_ID[section]}`} className="settings-nav-link" aria-current={index === current ? 'true' : undefined} onClick={(e) => choose(index, e)}>
              {titles[section]}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
