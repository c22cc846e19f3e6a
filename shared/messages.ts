// Free-form messages (gateway-spec.md 2.1–2.4, 2.6, 4.1): the request bodies of
// POST {base}/{product}/replymessage, the media table, and the success answer. The app checks every
// body with these schemas before sending, and the sandbox refuses with the same rules, so a broken
// rule is named by its field path (`interactive.action.parameters.ttl_minutes`) before anything
// leaves the machine.
//
// Limits that gateway-spec.md 8 leaves "not shown" (text lengths, counts of buttons, rows and
// sections) are the Cloud API's published ones (protocol.md: the gateway is a thin pass-through in
// front of it); they live in MESSAGE_LIMITS so that one table says what is enforced.
import { z } from 'zod';
import { DEFAULT_PRODUCT, gatewayNumberSchema } from './gateway';
import { list, term, type TextValue } from './i18n/text';
import type { Result } from './result';
import { httpUrlString, literalNamed, nonEmptyText, parseWith, requiredString, ruleMessage, strictObjectNamed, type Shape } from './validation';
import { encodeVoiceCallPayload, VOICE_CALL_PAYLOAD_MAX_CHARS } from './voice-call-payload';

// ---------------------------------------------------------------------------------------------
// The media table (gateway-spec.md 2.3)

export const MEDIA_TYPES = ['image', 'audio', 'video', 'document'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

/** A megabyte as the size limits count it (2^20 bytes). */
export const MB = 1024 * 1024;

export interface MediaFormat {
  /** The MIME type without parameters, lower case. */
  mimeType: string;
  /** File extensions with their dot, lower case. */
  extensions: readonly string[];
}

export interface MediaRule {
  formats: readonly MediaFormat[];
  maxBytes: number;
}

/**
 * gateway-spec.md 2.3, one MIME type per row with the extensions that go with it. ".jpg" is the
 * common spelling of ".jpeg" and is accepted as the same format.
 */
export const MEDIA_TABLE: Readonly<Record<MediaType, MediaRule>> = {
  image: {
    maxBytes: 5 * MB,
    formats: [
      { mimeType: 'image/jpeg', extensions: ['.jpeg', '.jpg'] },
      { mimeType: 'image/png', extensions: ['.png'] },
    ],
  },
  video: {
    maxBytes: 16 * MB,
    formats: [
      { mimeType: 'video/3gpp', extensions: ['.3gp'] },
      { mimeType: 'video/mp4', extensions: ['.mp4'] },
    ],
  },
  audio: {
    maxBytes: 10 * MB,
    formats: [
      { mimeType: 'audio/aac', extensions: ['.aac'] },
      { mimeType: 'audio/amr', extensions: ['.amr'] },
      { mimeType: 'audio/mpeg', extensions: ['.mp3'] },
      { mimeType: 'audio/mp4', extensions: ['.m4a'] },
      // gateway-spec.md 2.3: Opus only, mono; the link check reads the stream headers and refuses others.
      { mimeType: 'audio/ogg', extensions: ['.ogg'] },
    ],
  },
  document: {
    maxBytes: 25 * MB,
    formats: [
      { mimeType: 'text/plain', extensions: ['.txt'] },
      { mimeType: 'application/vnd.ms-excel', extensions: ['.xls'] },
      { mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', extensions: ['.xlsx'] },
      { mimeType: 'application/msword', extensions: ['.doc'] },
      { mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', extensions: ['.docx'] },
      { mimeType: 'application/vnd.ms-powerpoint', extensions: ['.ppt'] },
      { mimeType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', extensions: ['.pptx'] },
      { mimeType: 'application/pdf', extensions: ['.pdf'] },
    ],
  },
};

export const mediaMimeTypes = (type: MediaType): string[] => MEDIA_TABLE[type].formats.map((f) => f.mimeType);
export const mediaExtensions = (type: MediaType): string[] => MEDIA_TABLE[type].formats.flatMap((f) => f.extensions);

/** The article before a media type in a sentence: "an image", "a video". */
export const mediaArticle = (type: MediaType): 'a' | 'an' => (type === 'image' || type === 'audio' ? 'an' : 'a');

/** "5 MB", "16 MB", "2.4 MB", "812 KB" for messages to the agent. */
export function formatBytes(bytes: number): string {
  if (bytes >= MB) {
    const mb = bytes / MB;
    return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
  }
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

// ---------------------------------------------------------------------------------------------
// Limits

/** What is enforced beyond gateway-spec.md's own rules (see the note at the top). */
export const MESSAGE_LIMITS = {
  textBody: 4096,
  caption: 1024,
  filename: 240,
  interactiveBody: 1024,
  headerText: 60,
  footerText: 60,
  replyButtons: 3,
  replyButtonId: 256,
  replyButtonTitle: 20,
  listButton: 20,
  listSections: 10,
  /** Rows across all sections of one list. */
  listRows: 10,
  sectionTitle: 24,
  rowId: 200,
  rowTitle: 24,
  rowDescription: 72,
  ctaDisplayText: 20,
  flowCta: 20,
  /** gateway-spec.md / protocol.md: voice_call button. */
  voiceCallDisplayText: 20,
  voiceCallTtlMinutesMin: 1,
  voiceCallTtlMinutesMax: 43_200,
  voiceCallPayload: VOICE_CALL_PAYLOAD_MAX_CHARS,
} as const;

// ---------------------------------------------------------------------------------------------
// Building blocks. Every object is strict: a member the gateway does not take is refused by name,
// so a misspelt "fillename" cannot silently vanish.

/** A member that gateway-spec.md allows only elsewhere: refused by name, with the rule. */
const forbidden = (rule: string) => z.never({ error: rule }).optional();


/** Exactly one of two members (media id/link, flow_name/flow_id). */
function exactlyOneOf(a: string, b: string) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    const hasA = value[a] !== undefined;
    const hasB = value[b] !== undefined;
    if (hasA && hasB) ctx.addIssue({ code: 'custom', path: [b], message: ruleMessage('common.notTogether', { first: a, second: b }) });
    else if (!hasA && !hasB) ctx.addIssue({ code: 'custom', path: [], message: ruleMessage('common.exactlyOne', { first: a, second: b }) });
  };
}

/** Ids that the customer's answer comes back with must tell the choices apart. */
function uniqueIds<T>(idOf: (item: T) => unknown, pathOf: (index: number) => (string | number)[]) {
  return (items: T[], ctx: z.RefinementCtx): void => {
    const seen = new Set<unknown>();
    items.forEach((item, i) => {
      const id = idOf(item);
      if (typeof id !== 'string') return;
      if (seen.has(id)) ctx.addIssue({ code: 'custom', path: pathOf(i), message: ruleMessage('common.mustBeUnique', { id }) });
      seen.add(id);
    });
  };
}

const mediaId = () => nonEmptyText(); // an uploaded media's identifier

const caption = () => nonEmptyText(MESSAGE_LIMITS.caption).optional();

// ---------------------------------------------------------------------------------------------
// Media objects (gateway-spec.md 2.3): exactly one of id and link; caption only for image, video and
// document; filename only for document.

const NO_CAPTION = ruleMessage('messages.noCaption');
const NO_FILENAME = ruleMessage('messages.noFilename');

export const imageObjectSchema = strictObjectNamed(
  { id: mediaId().optional(), link: httpUrlString().optional(), caption: caption(), filename: forbidden(NO_FILENAME) },
  'an image',
).superRefine(exactlyOneOf('id', 'link'));
export const videoObjectSchema = strictObjectNamed(
  { id: mediaId().optional(), link: httpUrlString().optional(), caption: caption(), filename: forbidden(NO_FILENAME) },
  'a video',
).superRefine(exactlyOneOf('id', 'link'));
export const audioObjectSchema = strictObjectNamed(
  { id: mediaId().optional(), link: httpUrlString().optional(), caption: forbidden(NO_CAPTION), filename: forbidden(NO_FILENAME) },
  'an audio',
).superRefine(exactlyOneOf('id', 'link'));
export const documentObjectSchema = strictObjectNamed(
  { id: mediaId().optional(), link: httpUrlString().optional(), caption: caption(), filename: nonEmptyText(MESSAGE_LIMITS.filename).optional() },
  'a document',
).superRefine(exactlyOneOf('id', 'link'));

export type MediaObject = z.infer<typeof documentObjectSchema>;

// ---------------------------------------------------------------------------------------------
// Interactive objects (gateway-spec.md 2.4 and the variant table of 4.1)

const bodySchema = strictObjectNamed({ text: nonEmptyText(MESSAGE_LIMITS.interactiveBody) }, 'a body');
// gateway-spec.md 2.4: footer optional "where a variant allows omission"; the Cloud API allows
// leaving it out in every variant that has one.
const footerSchema = strictObjectNamed({ text: nonEmptyText(MESSAGE_LIMITS.footerText) }, 'a footer');
const textHeader = (why: TextValue) => strictObjectNamed({ type: literalNamed('text', why), text: nonEmptyText(MESSAGE_LIMITS.headerText) }, 'a text header');

const HEADER_KINDS = 'a header is exactly one of document, image, text, video';
/** cta_url headers carry media by link only (gateway-spec.md 4.1). */
const linkOnly = (what: string) => strictObjectNamed({ link: httpUrlString() }, what);
/** Reply-button headers may use an uploaded media id as well. */
const idOrLink = (what: string) => strictObjectNamed({ id: mediaId().optional(), link: httpUrlString().optional() }, what).superRefine(exactlyOneOf('id', 'link'));

const ctaUrlHeaderSchema = z.discriminatedUnion(
  'type',
  [
    strictObjectNamed({ type: literalNamed('document'), document: linkOnly('a document header') }, `a document header (${HEADER_KINDS})`),
    strictObjectNamed({ type: literalNamed('image'), image: linkOnly('an image header') }, `an image header (${HEADER_KINDS})`),
    strictObjectNamed({ type: literalNamed('text'), text: nonEmptyText(MESSAGE_LIMITS.headerText) }, `a text header (${HEADER_KINDS})`),
    strictObjectNamed({ type: literalNamed('video'), video: linkOnly('a video header') }, `a video header (${HEADER_KINDS})`),
  ],
  { error: ruleMessage('common.oneOf', { values: list(['document', 'image', 'text', 'video']) }) },
);

const buttonHeaderSchema = z.discriminatedUnion(
  'type',
  [
    strictObjectNamed({ type: literalNamed('document'), document: idOrLink('a document header') }, `a document header (${HEADER_KINDS})`),
    strictObjectNamed({ type: literalNamed('image'), image: idOrLink('an image header') }, `an image header (${HEADER_KINDS})`),
    strictObjectNamed({ type: literalNamed('text'), text: nonEmptyText(MESSAGE_LIMITS.headerText) }, `a text header (${HEADER_KINDS})`),
    strictObjectNamed({ type: literalNamed('video'), video: idOrLink('a video header') }, `a video header (${HEADER_KINDS})`),
  ],
  { error: ruleMessage('common.oneOf', { values: list(['document', 'image', 'text', 'video']) }) },
);

const replyButtonSchema = strictObjectNamed(
  {
    type: literalNamed('reply', term('replyButtonsOnly')),
    reply: strictObjectNamed({ id: nonEmptyText(MESSAGE_LIMITS.replyButtonId), title: nonEmptyText(MESSAGE_LIMITS.replyButtonTitle) }, 'a reply'),
  },
  'a reply button',
);

export const buttonInteractiveSchema = strictObjectNamed(
  {
    type: literalNamed('button'),
    header: buttonHeaderSchema.optional(),
    body: bodySchema,
    footer: footerSchema.optional(),
    action: strictObjectNamed(
      {
        buttons: z
          .array(replyButtonSchema, { error: ruleMessage('messages.buttonList') })
          .min(1, ruleMessage('messages.atLeastOneButton'))
          .max(MESSAGE_LIMITS.replyButtons, ruleMessage('messages.atMostButtons', { count: MESSAGE_LIMITS.replyButtons }))
          .superRefine(uniqueIds((b: { reply: { id: string } }) => b.reply.id, (i) => [i, 'reply', 'id'])),
      },
      'a button action',
    ),
  },
  'a button message',
);

const listRowSchema = strictObjectNamed(
  {
    id: nonEmptyText(MESSAGE_LIMITS.rowId),
    title: nonEmptyText(MESSAGE_LIMITS.rowTitle),
    // The Cloud API lets a row leave its description out; when present it is a string.
    description: requiredString().max(MESSAGE_LIMITS.rowDescription, ruleMessage('common.atMostCharacters', { count: MESSAGE_LIMITS.rowDescription })).optional(),
  },
  'a row',
);
const listSectionSchema = strictObjectNamed(
  {
    title: nonEmptyText(MESSAGE_LIMITS.sectionTitle),
    rows: z.array(listRowSchema, { error: ruleMessage('messages.rowList') }).min(1, ruleMessage('messages.atLeastOneRow')),
  },
  'a section',
);

export const listInteractiveSchema = strictObjectNamed(
  {
    type: literalNamed('list'),
    header: textHeader(term('listHeaderText')).optional(),
    body: bodySchema,
    footer: footerSchema.optional(),
    action: strictObjectNamed(
      {
        button: nonEmptyText(MESSAGE_LIMITS.listButton),
        sections: z
          .array(listSectionSchema, { error: ruleMessage('messages.sectionList') })
          .min(1, ruleMessage('messages.atLeastOneSection'))
          .max(MESSAGE_LIMITS.listSections, ruleMessage('messages.atMostSections', { count: MESSAGE_LIMITS.listSections }))
          .superRefine((sections, ctx) => {
            const rows = sections.flatMap((s, si) => s.rows.map((r, ri) => ({ id: r.id, path: [si, 'rows', ri, 'id'] })));
            if (rows.length > MESSAGE_LIMITS.listRows) {
              ctx.addIssue({ code: 'custom', path: [], message: ruleMessage('messages.atMostRowsInAll', { count: MESSAGE_LIMITS.listRows, has: rows.length }) });
            }
            uniqueIds((r: { id: string }) => r.id, (i) => rows[i]!.path)(rows, ctx);
          }),
      },
      'a list action',
    ),
  },
  'a list message',
);

export const ctaUrlInteractiveSchema = strictObjectNamed(
  {
    type: literalNamed('cta_url'),
    header: ctaUrlHeaderSchema.optional(),
    body: bodySchema,
    footer: footerSchema.optional(),
    action: strictObjectNamed(
      {
        name: literalNamed('cta_url'),
        parameters: strictObjectNamed({ display_text: nonEmptyText(MESSAGE_LIMITS.ctaDisplayText), url: httpUrlString() }, 'cta_url parameters'),
      },
      'a cta_url action',
    ),
  },
  'a cta_url message',
);

export const flowInteractiveSchema = strictObjectNamed(
  {
    type: literalNamed('flow'),
    header: textHeader(term('flowHeaderText')).optional(),
    body: bodySchema,
    footer: footerSchema.optional(),
    action: strictObjectNamed(
      {
        name: literalNamed('flow'),
        parameters: strictObjectNamed(
          {
            flow_message_version: z.string({ error: ruleMessage('messages.flowVersionRequired') }).regex(/^\d+(\.\d+)?$/, ruleMessage('messages.flowVersion')),
            flow_name: nonEmptyText().optional(),
            flow_id: nonEmptyText().optional(),
            flow_cta: nonEmptyText(MESSAGE_LIMITS.flowCta),
            // Optional members of the Cloud API's flow message, accepted when a composer sets them.
            flow_token: nonEmptyText().optional(),
            mode: z.enum(['draft', 'published'], { error: ruleMessage('common.either', { first: 'draft', second: 'published' }) }).optional(),
            flow_action: z.enum(['navigate', 'data_exchange'], { error: ruleMessage('common.either', { first: 'navigate', second: 'data_exchange' }) }).optional(),
            flow_action_payload: strictObjectNamed({ screen: nonEmptyText(), data: z.record(z.string(), z.unknown()).optional() }, 'a flow action payload').optional(),
          },
          'flow parameters',
        ).superRefine(exactlyOneOf('flow_name', 'flow_id')),
      },
      'a flow action',
    ),
  },
  'a flow message',
);

export const addressInteractiveSchema = strictObjectNamed(
  {
    type: literalNamed('address_message'),
    body: bodySchema,
    action: strictObjectNamed(
      {
        name: literalNamed('address_message'),
        parameters: strictObjectNamed({ country: requiredString().regex(/^[A-Z]{2}$/, ruleMessage('messages.countryInCapitals')) }, 'address_message parameters'),
      },
      'an address_message action',
    ),
  },
  'an address_message message',
);

export const voiceCallInteractiveSchema = strictObjectNamed(
  {
    type: literalNamed('voice_call'),
    body: bodySchema,
    action: strictObjectNamed(
      {
        name: literalNamed('voice_call'),
        parameters: strictObjectNamed(
          {
            display_text: nonEmptyText(MESSAGE_LIMITS.voiceCallDisplayText),
            ttl_minutes: z
              .number({ error: ruleMessage('messages.minutesRequired') })
              .int(ruleMessage('messages.wholeMinutes'))
              .min(MESSAGE_LIMITS.voiceCallTtlMinutesMin, ruleMessage('messages.atLeastMinutes', { count: MESSAGE_LIMITS.voiceCallTtlMinutesMin }))
              .max(MESSAGE_LIMITS.voiceCallTtlMinutesMax, ruleMessage('messages.atMostMinutes', { count: MESSAGE_LIMITS.voiceCallTtlMinutesMax, days: MESSAGE_LIMITS.voiceCallTtlMinutesMax / 1440 })),
            payload: requiredString().max(MESSAGE_LIMITS.voiceCallPayload, ruleMessage('common.atMostCharacters', { count: MESSAGE_LIMITS.voiceCallPayload })),
          },
          'voice_call parameters',
        ),
      },
      'a voice_call action',
    ),
  },
  'a voice_call message',
);

/** protocol.md: the free-form call-permission request (needs the 24-hour window, like all free-form). */
export const callPermissionRequestInteractiveSchema = strictObjectNamed(
  {
    type: literalNamed('call_permission_request'),
    body: bodySchema,
    action: strictObjectNamed({ name: literalNamed('call_permission_request') }, 'a call_permission_request action'),
  },
  'a call_permission_request message',
);

export const INTERACTIVE_TYPES = ['button', 'list', 'cta_url', 'flow', 'address_message', 'voice_call', 'call_permission_request'] as const;
export type InteractiveType = (typeof INTERACTIVE_TYPES)[number];

export const interactiveSchema = z.discriminatedUnion(
  'type',
  [
    buttonInteractiveSchema,
    listInteractiveSchema,
    ctaUrlInteractiveSchema,
    flowInteractiveSchema,
    addressInteractiveSchema,
    voiceCallInteractiveSchema,
    callPermissionRequestInteractiveSchema,
  ],
  { error: ruleMessage('common.oneOf', { values: list(INTERACTIVE_TYPES) }) },
);
export type Interactive = z.infer<typeof interactiveSchema>;

// ---------------------------------------------------------------------------------------------
// Whole requests: the envelope (gateway-spec.md 2.1) and the member named by `type`.

export const FREE_FORM_TYPES = ['text', 'image', 'audio', 'video', 'document', 'interactive'] as const;
export type FreeFormType = (typeof FREE_FORM_TYPES)[number];

/** The envelope members for an account's product word (protocol.md: the word is a setting). */
export function envelopeShape(product: string) {
  return {
    messaging_product: z.literal(product, { error: ruleMessage('common.literal', { value: product }) }),
    recipient_type: literalNamed('individual'),
    to: gatewayNumberSchema,
  };
}

function buildFreeFormSchema(product: string) {
  const envelope = envelopeShape(product);
  const message = <T extends FreeFormType, S extends Shape>(type: T, member: S) =>
    strictObjectNamed({ ...envelope, type: literalNamed(type), ...member }, `a ${type} message`);
  return z.discriminatedUnion(
    'type',
    [
      message('text', { text: strictObjectNamed({ body: nonEmptyText(MESSAGE_LIMITS.textBody), preview_url: z.boolean({ error: ruleMessage('common.mustBeBoolean') }).optional() }, 'a text') }),
      message('image', { image: imageObjectSchema }),
      message('audio', { audio: audioObjectSchema }),
      message('video', { video: videoObjectSchema }),
      message('document', { document: documentObjectSchema }),
      message('interactive', { interactive: interactiveSchema }),
    ],
    { error: ruleMessage('messages.freeFormType', { values: list(FREE_FORM_TYPES) }) },
  );
}

const freeFormSchemas = new Map<string, ReturnType<typeof buildFreeFormSchema>>();

/** The replymessage body (gateway-spec.md 4.1) for an account's product word. */
export function freeFormMessageSchema(product: string = DEFAULT_PRODUCT) {
  let schema = freeFormSchemas.get(product);
  if (!schema) {
    schema = buildFreeFormSchema(product);
    freeFormSchemas.set(product, schema);
  }
  return schema;
}

export type FreeFormMessage = z.infer<ReturnType<typeof freeFormMessageSchema>>;
export type TextMessage = Extract<FreeFormMessage, { type: 'text' }>;
export type InteractiveMessage = Extract<FreeFormMessage, { type: 'interactive' }>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A message without its envelope: what a composer produces. */
export type MessageContent = DistributiveOmit<FreeFormMessage, 'messaging_product' | 'recipient_type' | 'to'>;

/** Parses a replymessage body: every broken rule named by its field path (shared/validation.ts). */
export function parseFreeFormMessage(data: unknown, product: string = DEFAULT_PRODUCT): Result<FreeFormMessage> {
  return parseWith(freeFormMessageSchema(product), data);
}

/** A composer's content with the envelope around it, checked. */
export function buildFreeFormMessage(product: string, to: string, content: MessageContent): Result<FreeFormMessage> {
  return parseFreeFormMessage({ messaging_product: product, recipient_type: 'individual', to, ...content }, product);
}

// ---------------------------------------------------------------------------------------------
// The media a message names (gateway-spec.md 2.3)

/** One media member of a message: where it sits in the body, and how it names its file. */
export interface MediaMember {
  type: MediaType;
  /** The body path of the member that names the file: `image.link`, `interactive.header.video.id`. */
  field: string;
  source: { link: string } | { id: string };
}

/**
 * The media a message names: its own (image, audio, video, document) or its interactive header's
 * (a button's or a cta_url's; a list's header is text only). The app checks each link before it
 * sends and places a gateway refusal on the field it names; the sandbox judges each as the service
 * does. A whole request (FreeFormMessage) is a MessageContent with its envelope, and walks the same.
 */
export function mediaMembers(message: MessageContent): MediaMember[] {
  switch (message.type) {
    case 'image':
      return mediaMember('image', 'image', message.image);
    case 'audio':
      return mediaMember('audio', 'audio', message.audio);
    case 'video':
      return mediaMember('video', 'video', message.video);
    case 'document':
      return mediaMember('document', 'document', message.document);
    case 'interactive': {
      const { interactive } = message;
      const header = 'header' in interactive ? interactive.header : undefined;
      switch (header?.type) {
        case 'image':
          return mediaMember('image', 'interactive.header.image', header.image);
        case 'video':
          return mediaMember('video', 'interactive.header.video', header.video);
        case 'document':
          return mediaMember('document', 'interactive.header.document', header.document);
        default:
          // A text header, or none.
          return [];
      }
    }
    case 'text':
      return [];
  }
}

function mediaMember(type: MediaType, at: string, media: { link?: string | undefined; id?: string | undefined }): MediaMember[] {
  if (media.link !== undefined) return [{ type, field: `${at}.link`, source: { link: media.link } }];
  if (media.id !== undefined) return [{ type, field: `${at}.id`, source: { id: media.id } }];
  return [];
}

// ---------------------------------------------------------------------------------------------
// The voice_call button (its payload: voice-call-payload.ts)

export interface VoiceCallButtonInput {
  product: string;
  to: string;
  agentId: string;
  bodyText?: string;
  displayText?: string;
  ttlMinutes?: number;
}

export const VOICE_CALL_BUTTON_DEFAULTS = { bodyText: 'Tap the button to call us back.', displayText: 'Call us', ttlMinutes: 60 } as const;

/** The one-click "Send call button": a voice_call message whose payload routes the call to this agent. */
export function buildVoiceCallButtonMessage(input: VoiceCallButtonInput): Result<FreeFormMessage> {
  const payload = encodeVoiceCallPayload({ agentId: input.agentId, contact: input.to });
  if (!payload.ok) return payload;
  return buildFreeFormMessage(input.product, input.to, {
    type: 'interactive',
    interactive: {
      type: 'voice_call',
      body: { text: input.bodyText ?? VOICE_CALL_BUTTON_DEFAULTS.bodyText },
      action: {
        name: 'voice_call',
        parameters: {
          display_text: input.displayText ?? VOICE_CALL_BUTTON_DEFAULTS.displayText,
          ttl_minutes: input.ttlMinutes ?? VOICE_CALL_BUTTON_DEFAULTS.ttlMinutes,
          payload: payload.value,
        },
      },
    },
  });
}

/** protocol.md: the free-form call-permission request (inside the window; a template outside it). */
export function buildCallPermissionRequest(product: string, to: string, bodyText: string): Result<FreeFormMessage> {
  return buildFreeFormMessage(product, to, {
    type: 'interactive',
    interactive: { type: 'call_permission_request', body: { text: bodyText }, action: { name: 'call_permission_request' } },
  });
}

/** One line for a timeline: "Image: invoice.png", "Call button: Call us". */
export function describeMessage(message: MessageContent): string {
  switch (message.type) {
    case 'text':
      return message.text.body;
    case 'image':
    case 'audio':
    case 'video':
    case 'document': {
      const media: MediaObject = message.type === 'image' ? message.image : message.type === 'audio' ? message.audio : message.type === 'video' ? message.video : message.document;
      const name = media.filename ?? (media.link ? lastPathSegment(media.link) : `media ${media.id ?? ''}`.trim());
      const label = `${message.type[0]!.toUpperCase()}${message.type.slice(1)}`;
      return media.caption ? `${label}: ${name} — ${media.caption}` : `${label}: ${name}`;
    }
    case 'interactive':
      return describeInteractive(message.interactive);
  }
}

function describeInteractive(interactive: Interactive): string {
  switch (interactive.type) {
    case 'button':
      return `Buttons: ${interactive.body.text} [${interactive.action.buttons.map((b) => b.reply.title).join(' | ')}]`;
    case 'list':
      return `List: ${interactive.body.text} [${interactive.action.button}]`;
    case 'cta_url':
      return `Link button: ${interactive.action.parameters.display_text} → ${interactive.action.parameters.url}`;
    case 'flow':
      return `Form: ${interactive.action.parameters.flow_cta}`;
    case 'address_message':
      return `Address request: ${interactive.body.text}`;
    case 'voice_call':
      return `Call button: ${interactive.action.parameters.display_text}`;
    case 'call_permission_request':
      return `Call permission request: ${interactive.body.text}`;
  }
}

function lastPathSegment(link: string): string {
  if (!URL.canParse(link)) return link;
  const segments = new URL(link).pathname.split('/').filter((s) => s !== '');
  return segments.length > 0 ? decodeURIComponentSafe(segments[segments.length - 1]!) : link;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// ---------------------------------------------------------------------------------------------
// The answer (gateway-spec.md 2.6)

export const messageSentSchema = z.object({
  messaging_product: z.string(),
  contacts: z.array(z.object({ input: z.string(), wa_id: z.string().min(1) })).min(1),
  messages: z.array(z.object({ id: z.string().min(1), message_status: z.string().optional() })).min(1),
});
export type MessageSentAnswer = z.infer<typeof messageSentSchema>;

/** What a successful send tells the app: the message's id (statuses arrive by it) and the user's chat id. */
export interface SentMessage {
  messageId: string;
  waId: string;
}

/** Gateway error codes of the messaging half worth their own words (Cloud API codes, protocol.md). */
export const MESSAGE_ERROR_TEXT: Readonly<Record<number, string>> = {
  131026: 'The message could not be delivered to this customer',
  131047: 'The 24-hour conversation window is closed: the customer has not written in the last 24 hours, so send a template instead',
  131051: 'The gateway does not support this message type',
  131053: 'The media could not be fetched or is not in a supported format',
  132000: 'The template\u2019s variables do not match: check that every variable is filled',
  132001: 'No template with this name and language exists on the account',
  130429: 'Too many messages in a short time: try again later',
  131056: 'Too many messages to this customer in a short time: try again later',
};
