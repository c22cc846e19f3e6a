// The embedded sandbox's control API (shared/sandbox.ts SANDBOX_PATHS): its simulated customers and
// templates, and what the app lets the agent make the customers do in sandbox mode: call, hang up,
// write a message, press a call button, leave a voicemail, ask to be called back.
import { z } from 'zod';
import { createLogger, type Logger } from '../../shared/log';
import { text } from '../../shared/i18n/text';
import { errText, ok, type Result } from '../../shared/result';
import { SANDBOX_PATHS, type SandboxCustomer, type SandboxTemplate } from '../../shared/sandbox';
import { HttpExchange, type HttpMethod } from './http-exchange';

const customersSchema = z.array(
  z.object({
    number: z.string(),
    name: z.string(),
    behaviour: z.enum(['answers', 'rejects', 'no_answer', 'no_permission', 'busy']),
    // A built-in bad network; the app shows its label in the customer list.
    network: z.looseObject({ label: z.string().max(200) }).optional(),
  }),
) satisfies z.ZodType<SandboxCustomer[]>;
const incomingSchema = z.object({ callId: z.string().min(1) });
const inboundSchema = z.object({ messageId: z.string().min(1) });
const templatesSchema = z.array(
  z.object({ name: z.string(), language: z.string(), category: z.enum(['MARKETING', 'UTILITY', 'AUTHENTICATION']), body: z.string(), apiPayload: z.string() }),
) satisfies z.ZodType<SandboxTemplate[]>;
/** The sandbox answers errors as Graph envelopes or as a plain `{ error }`; either gives a message. */
const errorBodySchema = z.object({ error: z.union([z.string(), z.object({ message: z.string() })]) });

const TIMEOUT_MS = 5_000;
/** The longest answer read: the sandbox's lists of customers and templates are far shorter. */
const BODY_READ_LIMIT = 4 * 1024 * 1024;

export class SandboxControlClient {
  private readonly http: HttpExchange;
  private readonly log: Logger;

  constructor(baseUrl: string, logger?: Logger) {
    this.http = new HttpExchange({ baseUrl, agent: { keepAliveTimeout: 10_000 } });
    this.log = logger ?? createLogger('sandbox-control');
  }

  async customers(): Promise<Result<SandboxCustomer[]>> {
    const answer = await this.send('GET', SANDBOX_PATHS.customers);
    if (!answer.ok) return answer;
    const parsed = customersSchema.safeParse(answer.value);
    return parsed.success ? ok(parsed.data) : errText('internal', text('sandbox.unexpectedCustomers'));
  }

  /** A simulated customer calls the business. */
  async incoming(number: string): Promise<Result<{ callId: string }>> {
    const answer = await this.send('POST', SANDBOX_PATHS.incoming, { number });
    if (!answer.ok) return answer;
    const parsed = incomingSchema.safeParse(answer.value);
    return parsed.success ? ok({ callId: parsed.data.callId }) : errText('internal', text('sandbox.noCallId'));
  }

  /** The account's templates, each with the "API Payload" its template list shows. */
  async templates(): Promise<Result<SandboxTemplate[]>> {
    const answer = await this.send('GET', SANDBOX_PATHS.templates);
    if (!answer.ok) return answer;
    const parsed = templatesSchema.safeParse(answer.value);
    return parsed.success ? ok(parsed.data) : errText('internal', text('sandbox.unexpectedTemplates'));
  }

  /** The customer writes to the business: the sandbox sends the webhook, and the customer's window opens. */
  async inbound(number: string, words: string): Promise<Result<{ messageId: string }>> {
    const answer = await this.send('POST', SANDBOX_PATHS.inbound, { number, text: words });
    if (!answer.ok) return answer;
    const parsed = inboundSchema.safeParse(answer.value);
    return parsed.success ? ok({ messageId: parsed.data.messageId }) : errText('internal', text('sandbox.noMessageId'));
  }

  /** The customer presses the last call button sent to them: an incoming call carrying its payload. */
  async pressCallButton(number: string): Promise<Result<{ callId: string }>> {
    const answer = await this.send('POST', SANDBOX_PATHS.pressCallButton, { number });
    if (!answer.ok) return answer;
    const parsed = incomingSchema.safeParse(answer.value);
    return parsed.success ? ok({ callId: parsed.data.callId }) : errText('internal', text('sandbox.noCallId'));
  }

  /** The customer of the last unanswered call from `number` leaves a voicemail: the sandbox sends its audio message. */
  async voicemail(number: string): Promise<Result<{ callId: string }>> {
    const answer = await this.send('POST', SANDBOX_PATHS.voicemail, { number });
    if (!answer.ok) return answer;
    const parsed = incomingSchema.safeParse(answer.value);
    return parsed.success ? ok({ callId: parsed.data.callId }) : errText('internal', text('sandbox.noCallId'));
  }

  /** The customer asks to be called back about its last call: the service's automatic permission reply. */
  async callbackRequest(number: string): Promise<Result<{ callId: string }>> {
    const answer = await this.send('POST', SANDBOX_PATHS.callbackRequest, { number });
    if (!answer.ok) return answer;
    const parsed = incomingSchema.safeParse(answer.value);
    return parsed.success ? ok({ callId: parsed.data.callId }) : errText('internal', text('sandbox.noCallId'));
  }

  /** The customer on this call hangs up. */
  async hangUp(callId: string): Promise<Result<null>> {
    const answer = await this.send('POST', SANDBOX_PATHS.hangup, { callId });
    return answer.ok ? ok(null) : answer;
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  private async send(method: HttpMethod, path: string, body?: unknown): Promise<Result<unknown>> {
    const outcome = await this.http.exchange({ method, path, json: body, deadlineMs: TIMEOUT_MS, bodyLimit: BODY_READ_LIMIT });
    switch (outcome.kind) {
      case 'timeout':
        this.log.warn('the sandbox could not be reached', { path, reason: 'no answer in time' });
        return errText('timeout', text('sandbox.timeout'));
      case 'network':
        this.log.warn('the sandbox could not be reached', { path, reason: outcome.failure.code ?? outcome.failure.message });
        return errText('not_available', text('sandbox.unreachable'));
      case 'response':
        return this.answer(path, outcome.status, outcome.body);
    }
  }

  private answer(path: string, status: number, body: string): Result<unknown> {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    if (status >= 200 && status < 300) return ok(json);
    const refusal = errorBodySchema.safeParse(json);
    const message = refusal.success ? (typeof refusal.data.error === 'string' ? refusal.data.error : refusal.data.error.message) : `HTTP ${status}`;
    this.log.warn('the sandbox refused a control request', { path, status, reason: message });
    // The sandbox's own words stay its words: a value of the sentence around them.
    if (status === 404) return errText('not_found', text('sandbox.unknown', { reason: message }), { httpStatus: 404 });
    if (status < 500) return errText('invalid_input', text('sandbox.refused', { reason: message }), { httpStatus: status });
    return errText('internal', text('sandbox.failed', { reason: message }), { httpStatus: status, detail: body.slice(0, 2048) });
  }
}
