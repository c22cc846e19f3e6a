// Messages beside the call, end to end: Chromium runs the real renderer through the browser host, the
// sandbox plays the gateway and its customers (who write, read and press call buttons), the relay is
// real. The 24-hour window, the text and template composers, the timeline's delivery statuses, the
// media link check and the voice_call button that routes the customer's call back to its sender.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import type { SandboxTemplate } from '../../shared/sandbox';
import { eventually, incomingCard, startStack, startTeamStack, type Stack, type TeamStack } from './harness';
import { contactPanel, messageItem, openConversation, outboundTo } from './conversation-steps';

// `read` comes well after `delivered`, so the timeline shows each status long enough to be seen.
const SLOW_READ = { messaging: { statusDelaysMs: { sent: 100, delivered: 300, read: 3_000 } } };


describe('one agent', () => {
  let stack: Stack;
  let page: Page | undefined;

  beforeAll(async () => {
    stack = await startStack({ sandbox: SLOW_READ });
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(async () => {
    await page?.context().close();
    page = undefined;
  });

  test('(a) the customer writes, the window opens, a text goes out and shows delivered, then read', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    await stack.control('/control/inbound', { number: customer.number, text: 'Hello, is my order on its way?' });

    await openConversation(page, customer.number);
    const panel = contactPanel(page);
    await panel.getByText(/^Window open · \d{1,2}:\d{2}:\d{2} left$/).waitFor();
    await messageItem(page, 'Hello, is my order on its way?').waitFor();
    await expect(panel.getByText(customer.name).first().isVisible()).resolves.toBe(true);

    const text = 'It left the warehouse this morning.';
    await panel.getByRole('textbox', { name: 'Message' }).fill(text);
    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    await messageItem(page, text).getByText('delivered').waitFor();
    await messageItem(page, text).getByText('read').waitFor();
    // The composer is ready for the next message.
    await expect(panel.getByRole('textbox', { name: 'Message' }).inputValue()).resolves.toBe('');

    const sent = await outboundTo(stack.control, customer.number);
    expect(sent.filter((m) => m.text === text).map((m) => [m.endpoint, m.status])).toEqual([['replymessage', 'read']]);
  });

  test('(b) with the window closed, free-form is blocked and a pasted template goes out', async () => {
    page = await stack.newAgentPage();
    // A customer who never wrote.
    const customer = stack.customer('no_answer');
    await openConversation(page, customer.number);
    const panel = contactPanel(page);
    await panel.getByText('Window closed: send a template').waitFor();
    await expect(panel.getByRole('button', { name: 'Send call button' }).isDisabled()).resolves.toBe(true);

    await panel.getByRole('tab', { name: 'Text' }).click();
    await expect(panel.getByRole('textbox', { name: 'Message' }).isDisabled()).resolves.toBe(true);
    await panel.getByText('Free-form messages are blocked.').waitFor();
    await expect(panel.getByRole('button', { name: 'Send', exact: true }).isDisabled()).resolves.toBe(true);
    // The main process refuses too, without asking the gateway.
    const refused = await stack.service.handle('sendMessage', { to: customer.number, content: { type: 'text', text: { body: 'hello?' } } });
    expect(refused.ok ? 'sent' : refused.error.code).toBe('window_closed');

    const templates = await stack.control<SandboxTemplate[]>('/control/templates');
    const orderUpdate = templates.find((t) => t.name === 'order_update')!;
    await panel.getByRole('button', { name: 'Send a template instead' }).click();
    await panel.getByRole('textbox', { name: 'Template payload' }).fill(orderUpdate.apiPayload);
    // The recipient is this contact, whatever the paste said.
    await expect.poll(() => panel.getByRole('textbox', { name: 'Recipient' }).inputValue()).toBe('+1 202 555 0103');
    await panel.getByRole('textbox', { name: 'Body {{1}}' }).fill('Katherine');
    await panel.getByRole('textbox', { name: 'Body {{2}}' }).fill('A-1042');
    await panel.getByRole('textbox', { name: 'Body {{3}}' }).fill('Friday');
    await panel.getByRole('button', { name: 'Send template' }).click();

    const item = messageItem(page, 'Template order_update (en_US)');
    await item.getByText('delivered').waitFor();
    await expect(item.textContent()).resolves.toContain('Katherine · A-1042 · Friday');
    const sent = await outboundTo(stack.control, customer.number);
    expect(sent.map((m) => [m.endpoint, m.templateName])).toEqual([['sendtemplate', 'order_update']]);
    expect(JSON.stringify(sent[0]!.body)).toContain('"text":"A-1042"');
  });

  test('(c) a call button is sent inside the window; the customer presses it and the call rings this agent', async () => {
    page = await stack.newAgentPage();
    const customer = stack.sandbox.customers.find((c) => c.name === 'Grace Hopper')!;
    await stack.control('/control/inbound', { number: customer.number, text: 'Please call me about my bill.' });
    await openConversation(page, customer.number);
    const panel = contactPanel(page);
    await panel.getByText(/^Window open/).waitFor();

    await panel.getByRole('button', { name: 'Send call button' }).click();
    await panel.getByText(/Call button sent/).waitFor();
    await messageItem(page, 'Call button: Call us').getByText(/sent|delivered|read/).waitFor();

    const pressed = await stack.control<{ callId: string; payload: string }>('/control/press-call-button', { number: customer.number });
    expect(JSON.parse(pressed.payload)).toEqual({ v: 1, agentId: 'agent-1', contact: customer.number });
    const card = incomingCard(page);
    await card.getByText(customer.name).waitFor();
    await card.getByText('Calling back from a call button you sent').waitFor();
    await card.getByRole('button', { name: 'Decline' }).click();
    await eventually('reject to reach the gateway', async () => (await stack.gatewayLog()).some((l) => l.callId === pressed.callId && l.action === 'reject'));
  });

  test('a call refused for want of permission offers "Request call permission": a template outside the window, free-form inside it', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('no_permission');
    await page.getByLabel('Phone number').fill(`+${customer.number}`);
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await page.getByText('The customer has not allowed business calls').first().waitFor();

    // The customer of the call is the contact in view.
    const panel = contactPanel(page);
    await panel.getByText(customer.name).first().waitFor();
    await panel.getByRole('button', { name: 'Request call permission' }).click();
    await panel.getByText(/must go out as a template/).waitFor();
    await expect(panel.getByRole('tab', { name: 'Template' }).getAttribute('aria-selected')).resolves.toBe('true');
    expect(await outboundTo(stack.control, customer.number)).toEqual([]);

    await stack.control('/control/inbound', { number: customer.number, text: 'You can call me now.' });
    await panel.getByText(/^Window open/).waitFor();
    await panel.getByRole('button', { name: 'Request call permission' }).click();
    await panel.getByText(/Call permission requested/).waitFor();
    await messageItem(page, /Call permission request/).waitFor();
    const sent = await outboundTo(stack.control, customer.number);
    expect(sent.map((m) => [m.endpoint, m.interactiveType])).toEqual([['replymessage', 'call_permission_request']]);
  });

  test('a media link the server serves as the wrong type is refused with the reason, and nothing is sent', async () => {
    const png = await readFile('assets/icons/icon.png');
    const files = await serveFile(png, 'text/plain');
    try {
      page = await stack.newAgentPage();
      const customer = stack.customer('rejects');
      await stack.control('/control/inbound', { number: customer.number, text: 'Can you send me the photo?' });
      await openConversation(page, customer.number);
      const panel = contactPanel(page);
      await panel.getByText(/^Window open/).waitFor();

      await panel.getByRole('tab', { name: 'Media' }).click();
      const link = `${files.url}/photo.png`;
      await panel.getByRole('combobox', { name: 'Media type' }).selectOption('image');
      await panel.getByRole('textbox', { name: 'Media link' }).fill(link);
      await panel.getByRole('textbox', { name: 'Caption (optional)' }).fill('Your parcel at the door');
      await panel.getByRole('button', { name: 'Send', exact: true }).click();

      await panel.getByText(/the server says the file is text\/plain, not an image/).first().waitFor();
      await panel.getByRole('alert').getByText('Nothing was sent').waitFor();
      // What the agent typed stays for the fix.
      await expect(panel.getByRole('textbox', { name: 'Media link' }).inputValue()).resolves.toBe(link);
      await expect(panel.getByRole('textbox', { name: 'Caption (optional)' }).inputValue()).resolves.toBe('Your parcel at the door');
      // The app fetched the file itself before anything went out.
      expect(files.requests.some((r) => r.method === 'GET' && r.path === '/photo.png')).toBe(true);
      expect(await outboundTo(stack.control, customer.number)).toEqual([]);
    } finally {
      await files.close();
    }
  });
});

describe('a team of two agents', () => {
  let team: TeamStack;
  let pages: Page[] = [];

  beforeAll(async () => {
    team = await startTeamStack({ agents: 2 });
  });
  afterAll(async () => {
    await team?.close();
  });
  afterEach(async () => {
    for (const p of pages) await p.context().close();
    pages = [];
  });

  test('the customer who presses a call button rings the agent who sent it first; her Decline hands it to the team at once', async () => {
    const alice = await team.newAgentPage(0);
    const bob = await team.newAgentPage(1);
    pages = [alice, bob];
    for (const p of pages) await expect.poll(() => p.getByRole('combobox', { name: 'Presence' }).inputValue()).toBe('available');
    await eventually('both agents to be connected to the relay', () => team.relay.stats().connectedAgents >= 2);

    const customer = team.customer('answers');
    await team.control('/control/inbound', { number: customer.number, text: 'Could somebody call me?' });
    await openConversation(alice, customer.number);
    await contactPanel(alice).getByText(/^Window open/).waitFor();
    // Messages reach the whole team: Bob sees the window open too.
    await openConversation(bob, customer.number);
    await contactPanel(bob).getByText(/^Window open/).waitFor();

    await contactPanel(alice).getByRole('button', { name: 'Send call button' }).click();
    await messageItem(alice, 'Call button: Call us').waitFor();
    const pressed = await team.control<{ callId: string; payload: string }>('/control/press-call-button', { number: customer.number });
    expect(JSON.parse(pressed.payload)).toMatchObject({ agentId: team.agents[0]!.id });

    await incomingCard(alice).getByText(customer.name).waitFor();
    // The relay holds the call back from the others for 10 s (relay/REFERENCE.md "voice_call calls").
    await bob.waitForTimeout(2_000);
    await expect(incomingCard(bob).count()).resolves.toBe(0);

    // Alice declines: the call is not hers to take from the team. It is not rejected, and her Decline
    // ends the head start, so Bob rings at once; he is the last one left, so his Decline rejects it.
    await incomingCard(alice).getByRole('button', { name: 'Decline' }).click();
    await incomingCard(alice).waitFor({ state: 'detached' });
    await incomingCard(bob).getByText(customer.name).waitFor({ timeout: 15_000 });
    expect((await team.gatewayLog()).filter((l) => l.callId === pressed.callId).map((l) => l.action)).toEqual([]);
    await incomingCard(bob).getByRole('button', { name: 'Decline' }).click();
    await eventually('reject to reach the gateway', async () => (await team.gatewayLog()).some((l) => l.callId === pressed.callId && l.action === 'reject'));
    await expect(incomingCard(alice).count()).resolves.toBe(0);
  });
});

/** A real file on 127.0.0.1 with the Content-Type the test chooses; every request is recorded. */
async function serveFile(body: Buffer, contentType: string): Promise<{ url: string; requests: { method: string; path: string }[]; close(): Promise<void> }> {
  const requests: { method: string; path: string }[] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '' });
    res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': String(body.length) });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
