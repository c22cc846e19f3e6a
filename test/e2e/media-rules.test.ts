// The media rules of gateway-spec.md 2.3 end to end: Chromium runs the real renderer through the
// browser host, the files are real (the corpus made with Debian's tools) on a real server on
// 127.0.0.1, and the sandbox judges what reaches it as the gateway does. A file that breaks a rule is
// refused in the composer with its rule and never reaches the sandbox; a file the gateway takes with
// a warning waits for "Send anyway"; media by id from the sandbox's library goes out unchecked by the
// app (the gateway holds the file), and an id the gateway does not know is refused with its details
// on the id field. The files are served by test/support/media-file-server.ts, which answers ranges
// as real file servers do.
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { SandboxMedia } from '../../shared/sandbox';
import { mediaCorpus, type CorpusFile, type MediaCorpus } from '../fixtures/media-corpus';
import { file, startMediaFileServer, type MediaFileServer, type Route } from '../support/media-file-server';
import { eventually, startStack, type Stack } from './harness';
import { contactPanel, messageItem, openConversation, outboundTo } from './conversation-steps';

const isFocused = (box: Locator) => box.evaluate((el) => el === document.activeElement);

/** The part of a field that its aria-describedby names with this ending ("-hint", "-error"). */
async function describedBy(p: Page, box: Locator, ending: string): Promise<Locator> {
  const ids = ((await box.getAttribute('aria-describedby')) ?? '').split(' ');
  const id = ids.find((i) => i.endsWith(ending));
  expect(id, `${ending} in aria-describedby "${ids.join(' ')}"`).toBeDefined();
  return p.locator(`[id="${id}"]`);
}

/** The customer writes first (the 24-hour window opens), and the agent opens the Media tab. */
async function mediaTabFor(stack: Stack, page: Page, number: string): Promise<ReturnType<typeof contactPanel>> {
  await stack.control('/control/inbound', { number, text: 'Could you send me the file?' });
  await openConversation(page, number);
  const panel = contactPanel(page);
  await panel.getByText(/^Window open/).waitFor();
  await panel.getByRole('tab', { name: 'Media' }).click();
  return panel;
}

describe('media rules', () => {
  let stack: Stack;
  let corpus: MediaCorpus;
  let files: MediaFileServer;
  let page: Page | undefined;

  beforeAll(async () => {
    corpus = await mediaCorpus();
    files = await serveFiles([corpus.file('rgb16.png'), corpus.file('high-bframes.mp4')]);
    stack = await startStack();
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
    await files?.close();
  });
  afterEach(async () => {
    await page?.context().close();
    page = undefined;
  });

  test('(a) a 16-bit PNG by link is refused with its rule under the link field, and nothing reaches the sandbox', async () => {
    page = await stack.newAgentPage();
    const customer = stack.sandbox.customers.find((c) => c.name === 'Ada Lovelace')!;
    const panel = await mediaTabFor(stack, page, customer.number);

    const link = `${files.url}/rgb16.png`;
    await panel.getByRole('combobox', { name: 'Media type' }).selectOption('image');
    await panel.getByRole('radio', { name: 'By link' }).check();
    await panel.getByRole('textbox', { name: 'Media link' }).fill(link);
    await panel.getByRole('textbox', { name: 'Caption (optional)' }).fill('The colours you asked about');
    await panel.getByRole('button', { name: 'Send', exact: true }).click();

    await panel.getByRole('alert').getByText('Nothing was sent').waitFor();
    const linkBox = panel.getByRole('textbox', { name: 'Media link' });
    await expect(linkBox.getAttribute('aria-invalid')).resolves.toBe('true');
    // The rule is the link field's own error, tied to it for screen readers.
    const describedBy = (await linkBox.getAttribute('aria-describedby')) ?? '';
    const errorId = describedBy.split(' ').find((id) => id.endsWith('-error'));
    expect(errorId).toBeDefined();
    await expect(page.locator(`[id="${errorId}"]`).textContent()).resolves.toMatch(/16-bit (RGBA? )?PNG: images must be 8-bit RGB or RGBA/);
    await expect(panel.getByRole('button', { name: 'Send anyway' }).count()).resolves.toBe(0);
    // What the agent typed stays for the fix.
    await expect(linkBox.inputValue()).resolves.toBe(link);
    await expect(panel.getByRole('textbox', { name: 'Caption (optional)' }).inputValue()).resolves.toBe('The colours you asked about');

    expect(files.requestsFor('/rgb16.png').length).toBeGreaterThan(0);
    expect(await outboundTo(stack.control, customer.number)).toEqual([]);
    await expect(messageItem(page, /Image:/).count()).resolves.toBe(0);
  });

  test('(b) an H.264 High video with B-frames waits for "Send anyway", then reaches the sandbox', async () => {
    page = await stack.newAgentPage();
    const customer = stack.sandbox.customers.find((c) => c.name === 'Grace Hopper')!;
    const panel = await mediaTabFor(stack, page, customer.number);

    const link = `${files.url}/high-bframes.mp4`;
    const caption = 'How to fit the shelf';
    await panel.getByRole('combobox', { name: 'Media type' }).selectOption('video');
    const linkBox = panel.getByRole('textbox', { name: 'Media link' });
    await linkBox.fill(link);
    await panel.getByRole('textbox', { name: 'Caption (optional)' }).fill(caption);

    // Leaving the link field checked it: the hint says what the file is and that it has a warning,
    // which only the alert of the send lists.
    const hint = await describedBy(page, linkBox, '-hint');
    const hintText = await eventually('the link check', async () => {
      const text = (await hint.textContent()) ?? '';
      return /the gateway takes it/.test(text) ? text : undefined;
    });
    expect(hintText).toMatch(/^MP4: H\.264 High\b[^:]*, [\d.]+ (bytes|KB|MB): the gateway takes it, with a warning for you to confirm when you send it(\. |$)/);
    expect(hintText).not.toMatch(/does not play on Android/);

    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    const warning = panel.getByRole('alert').filter({ hasText: /B-frames/ });
    await warning.waitFor();
    await expect(warning.textContent()).resolves.toMatch(/does not play on Android/);
    await expect(warning.textContent()).resolves.toMatch(/Main|Baseline/);
    const sendAnyway = panel.getByRole('button', { name: 'Send anyway' });
    await sendAnyway.waitFor();
    // The button is described by the warnings it confirms.
    const warningId = await warning.getAttribute('id');
    expect(warningId).toBeTruthy();
    await expect(sendAnyway.getAttribute('aria-describedby')).resolves.toBe(warningId);
    // Held for the agent: nothing went out yet, and everything typed is still there.
    expect(await outboundTo(stack.control, customer.number)).toEqual([]);
    await expect(panel.getByRole('textbox', { name: 'Media link' }).inputValue()).resolves.toBe(link);
    await expect(panel.getByRole('textbox', { name: 'Caption (optional)' }).inputValue()).resolves.toBe(caption);

    // Send once more: the same answer comes as a new alert, so that a screen reader announces it again.
    await warning.evaluate((el) => el.setAttribute('data-seen', 'yes'));
    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    await eventually('the second answer\u2019s own alert', async () => (await warning.count()) === 1 && (await warning.getAttribute('data-seen')) === null);
    await expect(sendAnyway.getAttribute('aria-describedby')).resolves.toBe(warningId);
    expect(await outboundTo(stack.control, customer.number)).toEqual([]);

    await sendAnyway.click();
    await messageItem(page, `Video: high-bframes.mp4 — ${caption}`).waitFor();
    await warning.waitFor({ state: 'detached' });
    const sent = await eventually('the video to reach the sandbox', async () => {
      const videos = (await outboundTo(stack.control, customer.number)).filter((m) => m.type === 'video');
      return videos.length > 0 ? videos : undefined;
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ type: 'video', video: { link, caption } });
    expect(sent[0]!.status).not.toBe('refused');
    // The composer is ready for the next file, and so is the focus: not lost with the button.
    await expect(linkBox.inputValue()).resolves.toBe('');
    await eventually('focus on the link field', () => isFocused(linkBox));
  });

  test('(e) a file that breaks a rule by the time of "Send anyway" is refused on the link field, and focus goes to that field', async () => {
    page = await stack.newAgentPage();
    const customer = stack.sandbox.customers.find((c) => c.name === 'Margaret Hamilton')!;
    files.routes.set('/changing.mp4', await served(corpus.file('high-bframes.mp4')));
    const panel = await mediaTabFor(stack, page, customer.number);

    const link = `${files.url}/changing.mp4`;
    await panel.getByRole('combobox', { name: 'Media type' }).selectOption('video');
    const linkBox = panel.getByRole('textbox', { name: 'Media link' });
    await linkBox.fill(link);
    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    const sendAnyway = panel.getByRole('button', { name: 'Send anyway' });
    await sendAnyway.waitFor();

    // The file at the link is replaced by one the gateway refuses before the agent confirms.
    files.routes.set('/changing.mp4', await served(corpus.file('vp9.mp4')));
    await sendAnyway.click();
    await panel.getByRole('alert').getByText('Nothing was sent').waitFor();
    await expect(linkBox.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect((await describedBy(page, linkBox, '-error')).textContent()).resolves.toMatch(/VP9 video in MP4: videos must be H\.264 with AAC audio/);
    await eventually('focus on the link field in error', () => isFocused(linkBox));
    await expect(sendAnyway.count()).resolves.toBe(0);
    await expect(linkBox.inputValue()).resolves.toBe(link);
    expect(await outboundTo(stack.control, customer.number)).toEqual([]);
  });

  test('(c) media by id from the sandbox\u2019s library is sent', async () => {
    page = await stack.newAgentPage();
    const customer = stack.sandbox.customers.find((c) => c.behaviour === 'rejects')!;
    const library = await stack.control<SandboxMedia[]>('/control/media');
    const image = library.find((m) => m.type === 'image');
    expect(image).toBeDefined();
    const panel = await mediaTabFor(stack, page, customer.number);

    await panel.getByRole('combobox', { name: 'Media type' }).selectOption('image');
    await panel.getByRole('radio', { name: 'By media id' }).check();
    const idBox = panel.getByRole('textbox', { name: 'Media id' });
    // A link in the id field is named with the field and the rule; nothing is sent.
    await idBox.fill('https://example.com/photo.png');
    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    await panel.getByText(/Media id: is a link/).waitFor();
    expect(await outboundTo(stack.control, customer.number)).toEqual([]);

    await idBox.fill(image!.id);
    await panel.getByRole('textbox', { name: 'Caption (optional)' }).fill('Your parcel at the door');
    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    await messageItem(page, `Image: media ${image!.id} — Your parcel at the door`).waitFor();
    const sent = await eventually('the image to reach the sandbox', async () => {
      const images = (await outboundTo(stack.control, customer.number)).filter((m) => m.type === 'image');
      return images.length > 0 ? images : undefined;
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ type: 'image', image: { id: image!.id, caption: 'Your parcel at the door' } });
    expect(sent[0]!.status).not.toBe('refused');
    // The way of giving the media stays chosen for the next one.
    await expect(panel.getByRole('radio', { name: 'By media id' }).isChecked()).resolves.toBe(true);
    await expect(idBox.inputValue()).resolves.toBe('');
  });

  test('(d) an id the sandbox does not know is refused (131053) with its details on the "Media id" field; nothing is sent, every word stays', async () => {
    page = await stack.newAgentPage();
    const customer = stack.sandbox.customers.find((c) => c.name === 'Katherine Johnson')!;
    const library = await stack.control<SandboxMedia[]>('/control/media');
    const unknownId = '1900000000000099';
    expect(library.map((m) => m.id)).not.toContain(unknownId);
    const panel = await mediaTabFor(stack, page, customer.number);

    await panel.getByRole('combobox', { name: 'Media type' }).selectOption('image');
    await panel.getByRole('radio', { name: 'By media id' }).check();
    const idBox = panel.getByRole('textbox', { name: 'Media id' });
    await idBox.fill(unknownId);
    await panel.getByRole('textbox', { name: 'Caption (optional)' }).fill('Your parcel at the door');
    await panel.getByRole('button', { name: 'Send', exact: true }).click();

    await panel.getByRole('alert').getByText('Nothing was sent').waitFor();
    await expect(idBox.getAttribute('aria-invalid')).resolves.toBe('true');
    // The gateway's details are the id field's own error, tied to it for screen readers.
    const describedBy = (await idBox.getAttribute('aria-describedby')) ?? '';
    const errorId = describedBy.split(' ').find((id) => id.endsWith('-error'));
    expect(errorId).toBeDefined();
    await expect(page.locator(`[id="${errorId}"]`).textContent()).resolves.toBe(`Media id: unknown media id "${unknownId}": the account has no uploaded media with this id`);
    await expect(panel.getByRole('button', { name: 'Send anyway' }).count()).resolves.toBe(0);
    await expect(idBox.inputValue()).resolves.toBe(unknownId);
    await expect(panel.getByRole('textbox', { name: 'Caption (optional)' }).inputValue()).resolves.toBe('Your parcel at the door');
    await expect(panel.getByRole('radio', { name: 'By media id' }).isChecked()).resolves.toBe(true);

    // The sandbox refused it: nothing went out to the customer, and nothing joins the timeline.
    const seen = await outboundTo(stack.control, customer.number);
    expect(seen.map((m) => [m.type, m.status, m.error?.code, m.messageId])).toEqual([['image', 'refused', 131053, undefined]]);
    await expect(messageItem(page, /Image:/).count()).resolves.toBe(0);
  });
});

/** The corpus files on 127.0.0.1, each at /{name} with the Content-Type that goes with its name. */
async function serveFiles(corpusFiles: CorpusFile[]): Promise<MediaFileServer> {
  const routes: Record<string, Route> = {};
  for (const f of corpusFiles) routes[`/${f.name}`] = await served(f);
  return startMediaFileServer(routes);
}

/** A corpus file as a route, with the Content-Type that goes with its name. */
async function served(f: CorpusFile): Promise<Route> {
  return file(await readFile(f.path), { contentType: f.mimeType });
}
