// Template messages (gateway-spec.md 2.5a, 4.3): the sendtemplate body, and the agent's way to
// produce one — paste the "API Payload" JSON from the account's template list, fill in one field
// per variable, send.
//
// The console's payload is a sample: its `to` is a placeholder ("<USER_PHONE_NUMBER>") or a sample
// number, and each variable is a placeholder ("{{1}}", "<VALUE>", "") or a sample value. Pasting
// finds them (parseTemplatePayload); filling replaces them and checks the result with the same
// schema the gateway client and the sandbox use (fillTemplate → templateMessageSchema).
import { z } from 'zod';
import { DEFAULT_PRODUCT } from './gateway';
import { list, term, text as ruleText, type RuleText } from './i18n/text';
import { envelopeShape } from './messages';
import { normalisePhoneNumber } from './phone';
import { errText, ok, type Result, errorText } from './result';
import { fieldError, fieldPath, httpUrlString, isRecord, issueText, literalNamed, nonEmptyString, nonEmptyText, parseWith, requiredString, ruleMessage, strictObjectNamed } from './validation';

// ---------------------------------------------------------------------------------------------
// The template object (gateway-spec.md 2.5a)

/** Cloud API template names: lower-case letters, digits and underscores. */
const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;
/** "en", "en_US", "pt_BR", "zh_Hant_HK"-like codes. */
const LANGUAGE_CODE = /^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,4}){0,2}$/;

/** An unfilled console placeholder: "{{1}}", "{{customer_name}}", "<VALUE>", "[name]", or nothing. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  return v === '' || /^\{\{\s*[^{}]*\s*\}\}$/.test(v) || /^<[^<>]*>$/.test(v) || /^\[[^[\]]*\]$/.test(v);
}

/** A filled value must not still be the console's placeholder. */
const filledText = (max?: number) =>
  nonEmptyText(max).refine((s) => !/^\{\{\s*[^{}]*\s*\}\}$/.test(s.trim()) && !/^<[A-Z0-9_ -]*>$/.test(s.trim()), ruleMessage('templates.placeholder'));

const mediaRef = (what: string, withFilename = false) =>
  strictObjectNamed(
    withFilename ? { id: nonEmptyText().optional(), link: httpUrlString().optional(), filename: nonEmptyText().optional() } : { id: nonEmptyText().optional(), link: httpUrlString().optional() },
    what,
  ).superRefine((v, ctx) => {
    const hasId = v.id !== undefined;
    const hasLink = v.link !== undefined;
    if (hasId && hasLink) ctx.addIssue({ code: 'custom', path: ['link'], message: ruleMessage('common.notTogether', { first: 'id', second: 'link' }) });
    else if (!hasId && !hasLink) ctx.addIssue({ code: 'custom', path: [], message: ruleMessage('common.exactlyOne', { first: 'id', second: 'link' }) });
  });

const PARAMETER_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  text: strictObjectNamed({ type: literalNamed('text'), text: filledText(), parameter_name: nonEmptyText().optional() }, 'a text parameter'),
  currency: strictObjectNamed(
    {
      type: literalNamed('currency'),
      currency: strictObjectNamed(
        {
          fallback_value: filledText(),
          code: requiredString().regex(/^[A-Z]{3}$/, ruleMessage('templates.currencyCode')),
          amount_1000: z.number({ error: ruleMessage('common.requiredNumber') }).int(ruleMessage('templates.amount')),
        },
        'a currency',
      ),
      parameter_name: nonEmptyText().optional(),
    },
    'a currency parameter',
  ),
  date_time: strictObjectNamed(
    { type: literalNamed('date_time'), date_time: strictObjectNamed({ fallback_value: filledText() }, 'a date_time'), parameter_name: nonEmptyText().optional() },
    'a date_time parameter',
  ),
  image: strictObjectNamed({ type: literalNamed('image'), image: mediaRef('an image') }, 'an image parameter'),
  video: strictObjectNamed({ type: literalNamed('video'), video: mediaRef('a video') }, 'a video parameter'),
  document: strictObjectNamed({ type: literalNamed('document'), document: mediaRef('a document', true) }, 'a document parameter'),
  payload: strictObjectNamed({ type: literalNamed('payload'), payload: filledText() }, 'a payload parameter'),
  coupon_code: strictObjectNamed({ type: literalNamed('coupon_code'), coupon_code: filledText(15) }, 'a coupon_code parameter'),
};

/** Runs `schema` on `value` and reports its issues at their own paths inside the current object. */
function checkWith(schema: z.ZodType, value: unknown, ctx: z.RefinementCtx): void {
  const parsed = schema.safeParse(value);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
}

/**
 * A parameter: the known types are checked member by member; others that a console may produce
 * (location, action, …) pass with their type named, as the gateway is the judge of those.
 */
const parameterSchema = z
  .looseObject({ type: nonEmptyString() }, { error: ruleMessage('common.mustBeObject') })
  .superRefine((p, ctx) => {
    const known = PARAMETER_SCHEMAS[p.type];
    if (known) checkWith(known, p, ctx);
  });
export type TemplateParameter = z.infer<typeof parameterSchema>;

const parameters = z.array(parameterSchema, { error: ruleMessage('templates.parameterList') });

const INDEX_RULE = ruleMessage('templates.buttonIndex');
// The parameters themselves are checked once, by parameterSchema; here only that they are a list.
const parameterList = z.array(z.unknown(), { error: ruleMessage('templates.parameterListRequired') });
const COMPONENT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  header: strictObjectNamed({ type: literalNamed('header'), parameters: parameterList }, 'a header component'),
  body: strictObjectNamed({ type: literalNamed('body'), parameters: parameterList }, 'a body component'),
  button: strictObjectNamed(
    {
      type: literalNamed('button'),
      sub_type: z.string({ error: ruleMessage('templates.subTypeRequired') }).regex(/^[a-z_]+$/, ruleMessage('templates.subType')),
      index: z.union([z.number().int(INDEX_RULE).min(0, INDEX_RULE).max(9, INDEX_RULE), z.string().regex(/^[0-9]$/, INDEX_RULE)], { error: INDEX_RULE }),
      parameters: parameterList,
    },
    'a button component',
  ),
};

const componentSchema = z
  .looseObject({ type: nonEmptyString(), parameters: parameters.optional() }, { error: ruleMessage('common.mustBeObject') })
  .superRefine((c, ctx) => {
    const known = COMPONENT_SCHEMAS[c.type];
    if (known) checkWith(known, c, ctx);
  });
export type TemplateComponent = z.infer<typeof componentSchema>;

export const templateObjectSchema = strictObjectNamed(
  {
    name: requiredString().regex(TEMPLATE_NAME, ruleMessage('templates.name')),
    language: strictObjectNamed(
      {
        code: requiredString().regex(LANGUAGE_CODE, ruleMessage('templates.languageCode')),
        policy: literalNamed('deterministic').optional(),
      },
      'a language',
    ),
    components: z.array(componentSchema, { error: ruleMessage('templates.componentList') }).optional(),
    /** Older payloads name the account's template namespace. */
    namespace: nonEmptyText().optional(),
  },
  'a template',
);
export type TemplateObject = z.infer<typeof templateObjectSchema>;

function buildTemplateMessageSchema(product: string) {
  return strictObjectNamed({ ...envelopeShape(product), type: literalNamed('template', term('templatesOnly')), template: templateObjectSchema }, 'a template message');
}
const templateSchemas = new Map<string, ReturnType<typeof buildTemplateMessageSchema>>();

/** The sendtemplate body (gateway-spec.md 2.1 + 2.5a, 4.3) for an account's product word. */
export function templateMessageSchema(product: string = DEFAULT_PRODUCT) {
  let schema = templateSchemas.get(product);
  if (!schema) {
    schema = buildTemplateMessageSchema(product);
    templateSchemas.set(product, schema);
  }
  return schema;
}
export type TemplateMessage = z.infer<ReturnType<typeof templateMessageSchema>>;

export function parseTemplateMessage(data: unknown, product: string = DEFAULT_PRODUCT): Result<TemplateMessage> {
  return parseWith(templateMessageSchema(product), data);
}

// ---------------------------------------------------------------------------------------------
// Pasting the console's "API Payload"

export type TemplateFieldKind = 'text' | 'link' | 'payload' | 'coupon_code' | 'fallback_value';

/** One variable of the pasted template: the UI shows one input per field. */
export interface TemplateField {
  /** Where the value goes in the request body, e.g. `template.components[1].parameters[0].text`. */
  path: string;
  /** "Body {{1}}", "Header image link", "Button 1 URL suffix". */
  label: string;
  /** What the paste had there: a placeholder or a sample value. */
  sample: string;
  /** True when `sample` is a placeholder rather than a sample value worth prefilling. */
  placeholder: boolean;
  kind: TemplateFieldKind;
}

export interface TemplateDraft {
  name: string;
  languageCode: string;
  /** The paste's `to`: a placeholder, or a sample number (then `number` is its gateway form). */
  recipient: { raw?: string; placeholder: boolean; number?: string };
  fields: TemplateField[];
  /** The template object as pasted; filling writes the values at the fields' paths. */
  template: TemplateObject;
  /** The paste's messaging_product word, when it had one (the account's setting wins on sending). */
  pastedProduct?: string;
}

/** What the draft stage needs: the shape, with placeholders allowed where values go. */
const draftParameterSchema = z.looseObject({ type: nonEmptyString() }, { error: ruleMessage('common.mustBeObject') });
const draftSchema = z.looseObject(
  {
    name: z.string({ error: ruleMessage('templates.nameRequired') }).regex(TEMPLATE_NAME, ruleMessage('templates.name')),
    language: z.looseObject(
      { code: z.string({ error: ruleMessage('templates.codeRequired') }).regex(LANGUAGE_CODE, ruleMessage('templates.languageCode')) },
      { error: ruleMessage('templates.languageRequired') },
    ),
    components: z
      .array(
        z.looseObject(
          { type: nonEmptyString(), parameters: z.array(draftParameterSchema, { error: ruleMessage('templates.parameterList') }).optional() },
          { error: ruleMessage('common.mustBeObject') },
        ),
        { error: ruleMessage('templates.componentList') },
      )
      .optional(),
  },
  { error: ruleMessage('common.requiredObject') },
);

const MAX_PASTE = 64 * 1024;

/** Reads the pasted "API Payload": the template, its recipient and every variable. */
export function parseTemplatePayload(pasted: string): Result<TemplateDraft> {
  if (pasted.length > MAX_PASTE) return errText('invalid_input', ruleText('templates.pasteTooLong', { size: MAX_PASTE / 1024 }), { field: 'payload' });
  const json = parsePastedJson(pasted);
  if (!json.ok) return json;
  const root = json.value;
  if (!isRecord(root)) return errText('invalid_input', ruleText('templates.pasteNotObject'), { field: 'payload' });

  // A whole request ({…, "type":"template", "template":{…}}), or the template object alone.
  let templateValue: unknown;
  let prefix: string;
  if ('template' in root) {
    if (root.type !== undefined && root.type !== 'template') {
      return fieldError('invalid_input', 'type', ruleText('templates.pasteNotTemplate', { type: String(root.type) }));
    }
    templateValue = root.template;
    prefix = 'template';
  } else if ('name' in root && 'language' in root) {
    templateValue = root;
    prefix = '';
  } else {
    return fieldError('invalid_input', 'template', ruleText('templates.pasteNoTemplate'));
  }
  const draft = draftSchema.safeParse(templateValue);
  if (!draft.success) {
    const issue = draft.error.issues[0]!;
    return fieldError('invalid_input', fieldPath(issue.path, prefix), issueText(issue));
  }

  const template = structuredCloneJson(templateValue) as TemplateObject;
  const fields = collectFields(template);
  const to = typeof root.to === 'string' ? root.to : typeof root.to === 'number' ? String(root.to) : undefined;
  const recipient: TemplateDraft['recipient'] = { placeholder: to === undefined || isPlaceholder(to) };
  if (to !== undefined) {
    recipient.raw = to;
    if (!recipient.placeholder) {
      const number = toGatewayNumber(to);
      if (number.ok) recipient.number = number.value;
      else recipient.placeholder = true;
    }
  }
  return ok({
    name: draft.data.name,
    languageCode: draft.data.language.code,
    recipient,
    fields,
    template,
    ...(typeof root.messaging_product === 'string' ? { pastedProduct: root.messaging_product } : {}),
  });
}

export interface FillTemplateInput {
  /** The customer's number as typed or in gateway digits. */
  to: string;
  /** One value per field, keyed by the field's path. */
  values: Readonly<Record<string, string>>;
  /** The account's product word; default "chatapp". */
  product?: string;
  /** For numbers typed without a country code. */
  defaultCountry?: string;
}

/** The final sendtemplate body: the number normalised, every variable filled, every rule checked. */
export function fillTemplate(draft: TemplateDraft, input: FillTemplateInput): Result<TemplateMessage> {
  const to = toGatewayNumber(input.to, input.defaultCountry);
  if (!to.ok) return { ok: false, error: { ...to.error, code: 'invalid_input', field: 'to' } };
  const missing = draft.fields.filter((f) => (input.values[f.path] ?? '').trim() === '');
  if (missing.length > 0) {
    const names = list(missing.map((f) => f.label));
    return fieldError('invalid_input', missing[0]!.path, ruleText('templates.fillEveryVariable', { names }));
  }
  const template = structuredCloneJson(draft.template) as TemplateObject;
  for (const field of draft.fields) setAt(template, relativePath(field.path), input.values[field.path]!);
  const product = input.product ?? DEFAULT_PRODUCT;
  return parseTemplateMessage({ messaging_product: product, recipient_type: 'individual', to: to.value, type: 'template', template }, product);
}

/** One line for a timeline: "Template order_update (en_US)". */
export function describeTemplate(message: Pick<TemplateMessage, 'template'>): string {
  return `Template ${message.template.name} (${message.template.language.code})`;
}

// ---------------------------------------------------------------------------------------------

function collectFields(template: TemplateObject): TemplateField[] {
  const fields: TemplateField[] = [];
  const components = template.components ?? [];
  components.forEach((component, ci) => {
    const where = componentLabel(component);
    let ordinal = 0;
    (component.parameters ?? []).forEach((raw, pi) => {
      if (!isRecord(raw)) return;
      const base = `template.components[${ci}].parameters[${pi}]`;
      const add = (member: string, kind: TemplateFieldKind, label: string, value: unknown) => {
        const sample = typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
        fields.push({ path: `${base}.${member}`, label, sample, placeholder: isPlaceholder(sample), kind });
      };
      const named = typeof raw.parameter_name === 'string' && raw.parameter_name !== '' ? raw.parameter_name : undefined;
      switch (raw.type) {
        case 'text': {
          ordinal++;
          const text = typeof raw.text === 'string' ? raw.text : '';
          const braces = /^\{\{\s*([^{}]+?)\s*\}\}$/.exec(text.trim());
          const tag = named ? `{{${named}}}` : braces ? `{{${braces[1]}}}` : `variable ${ordinal}`;
          add('text', 'text', component.type === 'button' ? `${where} ${urlOrText(component)}` : `${where} ${tag}`, raw.text);
          break;
        }
        case 'currency':
        case 'date_time': {
          ordinal++;
          const inner = isRecord(raw[raw.type]) ? (raw[raw.type] as Record<string, unknown>) : {};
          add(`${raw.type}.fallback_value`, 'fallback_value', `${where} ${named ? `{{${named}}}` : `variable ${ordinal}`} (${raw.type === 'currency' ? 'amount' : 'date'})`, inner.fallback_value);
          break;
        }
        case 'image':
        case 'video':
        case 'document': {
          const inner = isRecord(raw[raw.type]) ? (raw[raw.type] as Record<string, unknown>) : {};
          // A media id is an upload of the account's own: only a link is something the agent fills.
          if (inner.id !== undefined && inner.link === undefined) break;
          add(`${raw.type}.link`, 'link', `${where} ${raw.type} link`, inner.link);
          break;
        }
        case 'payload':
          add('payload', 'payload', `${where} payload`, raw.payload);
          break;
        case 'coupon_code':
          add('coupon_code', 'coupon_code', `${where} coupon code`, raw.coupon_code);
          break;
        default:
          break;
      }
    });
  });
  return fields;
}

function componentLabel(component: TemplateComponent): string {
  switch (component.type) {
    case 'header':
      return 'Header';
    case 'body':
      return 'Body';
    case 'button': {
      const index = Number(component.index);
      return Number.isInteger(index) ? `Button ${index + 1}` : 'Button';
    }
    default:
      return `${component.type[0]!.toUpperCase()}${component.type.slice(1)}`;
  }
}

const urlOrText = (component: TemplateComponent) => (component.sub_type === 'url' ? 'URL suffix' : 'text');

/** Pure digits are the gateway's form already; anything else is a number as people type it. */
function toGatewayNumber(raw: string, defaultCountry?: string): Result<string> {
  const trimmed = raw.trim();
  return normalisePhoneNumber(/^[0-9]+$/.test(trimmed) ? `+${trimmed}` : trimmed, defaultCountry);
}

/** JSON.parse with errors an agent can act on: where the problem is, and the usual culprits. */
function parsePastedJson(pasted: string): Result<unknown> {
  // Not trimmed: error positions must count from what the agent pasted.
  const text = pasted.replace(/^\uFEFF/, '');
  if (text.trim() === '') return errText('invalid_input', ruleText('templates.pasteEmpty'), { field: 'payload' });
  const first = tryJson(text);
  if (first.ok) return first;
  // The payload inside a curl command or after a label: from the first "{" to the last "}".
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  const wrapped = start > 0 && text.slice(0, start).trim() !== '';
  if (wrapped && end > start) {
    const inner = tryJson(text.slice(start, end + 1));
    if (inner.ok) return inner;
  }
  const failure = wrapped && end > start ? { ...tryJsonError(text.slice(start, end + 1)), offset: start } : { ...first.error, offset: 0 };
  const reason = failure.reason;
  const problem =
    failure.position === undefined ? ruleText('templates.notJson', { reason }) : ruleText('templates.notJsonAt', { ...lineColumnOf(text, failure.position + failure.offset), reason });
  const hints: RuleText[] = [];
  if (/[\u201C\u201D\u2018\u2019]/.test(text)) hints.push(ruleText('templates.typographicQuotes'));
  if (/,\s*[}\]]/.test(text)) hints.push(ruleText('templates.trailingComma'));
  const said = hints.length > 0 ? ruleText('common.withHints', { text: problem, hints: list(hints, 'semicolon') }) : problem;
  return errText('invalid_input', said, { field: 'payload' });
}

type JsonAttempt = { ok: true; value: unknown } | { ok: false; error: { reason: string; position?: number } };

function tryJson(text: string): JsonAttempt {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    const message = errorText(e);
    const position = /position (\d+)/.exec(message);
    const lineCol = /line (\d+) column (\d+)/.exec(message);
    const reason = message.replace(/ in JSON at position \d+.*$/s, '').replace(/\s*\(line \d+ column \d+\)/, '');
    if (position) return { ok: false, error: { reason, position: Number(position[1]) } };
    if (lineCol) return { ok: false, error: { reason, position: offsetOf(text, Number(lineCol[1]), Number(lineCol[2])) } };
    return { ok: false, error: { reason } };
  }
}

function tryJsonError(text: string): { reason: string; position?: number } {
  const attempt = tryJson(text);
  return attempt.ok ? { reason: 'unexpected content around the JSON' } : attempt.error;
}

/** "line 3, column 7" (both from 1) for an offset into `text`. */
export function lineAndColumn(text: string, offset: number): string {
  const { line, column } = lineColumnOf(text, offset);
  return `line ${line}, column ${column}`;
}

function lineColumnOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

function offsetOf(text: string, line: number, column: number): number {
  const lines = text.split('\n');
  let offset = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i]!.length + 1;
  return offset + column - 1;
}

/** `template.components[0].parameters[1].text` → the same path inside the template object. */
function relativePath(path: string): (string | number)[] {
  const parts: (string | number)[] = [];
  for (const m of path.replace(/^template\.?/, '').matchAll(/([^.[\]]+)|\[(\d+)\]/g)) parts.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return parts;
}

function setAt(target: unknown, path: (string | number)[], value: string): void {
  let node = target as Record<string | number, unknown>;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      node[key] = value;
      return;
    }
    if (!isRecord(node[key]) && !Array.isArray(node[key])) node[key] = {};
    node = node[key] as Record<string | number, unknown>;
  });
}

const structuredCloneJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;
