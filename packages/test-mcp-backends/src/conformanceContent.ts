/*
 * What the conformance scenarios expect to read, the same in both eras: the content tools'
 * results, the sampling and elicitation tools, the resources and the prompts (names and texts fixed by
 * `@modelcontextprotocol/conformance`). Plain JSON, no SDK types, so the 2025 half
 * (conformanceBackend.ts, SDK 1.x) and the 2026-07-28 half (modernConformanceServer.ts, SDK v2)
 * serve the very same data.
 */

/** A 1×1 PNG (base64). */
export const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
/** A tiny WAV (base64). */
export const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
/** The input schema of a tool without arguments. */
export const NO_ARGS = { type: 'object' as const, properties: {} };

/** A tool whose result does not depend on anything. */
export interface ContentTool {
  name: string;
  description: string;
  result: { content: Array<Record<string, unknown>>; isError?: boolean };
}

/** A text-only tool result. */
export const textResult = (text: string) => ({ content: [{ type: 'text', text }] });

/** The tools whose results are fixed. */
export const CONTENT_TOOLS: readonly ContentTool[] = [
  {
    name: 'test_simple_text',
    description: 'Simple text content',
    result: textResult('This is a simple text response for testing.'),
  },
  {
    name: 'test_image_content',
    description: 'Image content',
    result: { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] },
  },
  {
    name: 'test_audio_content',
    description: 'Audio content',
    result: { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] },
  },
  {
    name: 'test_embedded_resource',
    description: 'Embedded resource content',
    result: {
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    },
  },
  {
    name: 'test_multiple_content_types',
    description: 'Text, image and resource content',
    result: {
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    },
  },
  {
    name: 'test_error_handling',
    description: 'Always fails',
    result: {
      isError: true,
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    },
  },
];

/** The listed resources. */
export const RESOURCES = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    title: 'Static Text Resource',
    description: 'A static text resource for testing',
    mimeType: 'text/plain',
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    title: 'Static Binary Resource',
    description: 'A static binary resource (image) for testing',
    mimeType: 'image/png',
  },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    title: 'Watched Resource',
    description: 'A resource clients may subscribe to',
    mimeType: 'text/plain',
  },
];

/** The listed resource templates. */
export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'test://template/{id}/data',
    name: 'template',
    title: 'Resource Template',
    description: 'A resource template with parameter substitution',
    mimeType: 'application/json',
  },
];

/** One content item of a read resource: text or base64 blob. */
export type ResourceContents =
  { uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string };

/** The contents of a resource, or undefined for a URI that names none. */
export function readContentResource(uri: string): { contents: ResourceContents[] } | undefined {
  if (uri === 'test://static-text') {
    return {
      contents: [
        { uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
      ],
    };
  }
  if (uri === 'test://static-binary') {
    return { contents: [{ uri, mimeType: 'image/png', blob: PNG }] };
  }
  if (uri === 'test://watched-resource') {
    return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }] };
  }
  const template = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (template === null) return undefined;
  const id = template[1];
  return {
    contents: [
      {
        uri,
        mimeType: 'application/json',
        text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
      },
    ],
  };
}

/** The listed prompts with fixed messages. */
export const PROMPTS = [
  {
    name: 'test_simple_prompt',
    title: 'Simple Test Prompt',
    description: 'A simple prompt without arguments',
  },
  {
    name: 'test_prompt_with_arguments',
    title: 'Prompt With Arguments',
    description: 'A prompt with required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    title: 'Prompt With Embedded Resource',
    description: 'A prompt that includes an embedded resource',
    arguments: [
      { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
    ],
  },
  {
    name: 'test_prompt_with_image',
    title: 'Prompt With Image',
    description: 'A prompt that includes image content',
  },
];

const user = (content: Record<string, unknown>) => ({ role: 'user', content });

/** The messages of one of {@link PROMPTS}, or undefined for another name. */
export function contentPrompt(
  name: string,
  args: Record<string, string>,
): { messages: Array<{ role: string; content: Record<string, unknown> }> } | undefined {
  switch (name) {
    case 'test_simple_prompt':
      return { messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })] };
    case 'test_prompt_with_arguments':
      return {
        messages: [
          user({
            type: 'text',
            text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`,
          }),
        ],
      };
    case 'test_prompt_with_embedded_resource':
      return {
        messages: [
          user({
            type: 'resource',
            resource: {
              uri: args.resourceUri,
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          }),
          user({ type: 'text', text: 'Please process the embedded resource above.' }),
        ],
      };
    case 'test_prompt_with_image':
      return {
        messages: [
          user({ type: 'image', data: PNG, mimeType: 'image/png' }),
          user({ type: 'text', text: 'Please analyze the image above.' }),
        ],
      };
    default:
      return undefined;
  }
}

/** A server-to-client request a tool makes (the same in both eras; only the carrier differs). */
export interface InputAsk {
  method: 'elicitation/create' | 'sampling/createMessage';
  params: Record<string, unknown>;
}

/**
 * A tool that asks the client one thing and reports the answer: the 2025 half asks with a real
 * server-to-client request, the 2026-07-28 half with an `input_required` result, so a dual-era
 * client (or a broker) sees the same tools whichever era it lists with.
 */
export interface InputTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  ask(args: Record<string, unknown>): InputAsk;
  /** The result text for the client's answer (an ElicitResult or a CreateMessageResult). */
  answer(result: Record<string, unknown>): string;
}

const elicitationOutcome = (result: Record<string, unknown>) =>
  `action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;

const ENUM_CHOICES = [
  { const: 'value1', title: 'First Choice' },
  { const: 'value2', title: 'Second Choice' },
  { const: 'value3', title: 'Third Choice' },
];

/** The tools of the sampling and elicitation scenarios (0.1.x names and texts). */
export const INPUT_TOOLS: readonly InputTool[] = [
  {
    name: 'test_sampling',
    description: 'Asks the client for an LLM completion',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
      required: ['prompt'],
    },
    ask: args => ({
      method: 'sampling/createMessage',
      params: {
        messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }],
        maxTokens: 100,
      },
    }),
    answer: result => {
      const content = result.content as { type?: string; text?: string } | undefined;
      return `LLM response: ${content?.type === 'text' ? content.text : 'No response'}`;
    },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user for input',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show the user' } },
      required: ['message'],
    },
    ask: args => ({
      method: 'elicitation/create',
      params: {
        message: String(args.message),
        requestedSchema: {
          type: 'object',
          properties: { response: { type: 'string', description: "User's response" } },
          required: ['response'],
        },
      },
    }),
    answer: result => `User response: ${elicitationOutcome(result)}`,
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicitation with defaults for every primitive type (SEP-1034)',
    inputSchema: NO_ARGS,
    ask: () => ({
      method: 'elicitation/create',
      params: {
        message: 'Please review and update the form fields with defaults',
        requestedSchema: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'User name', default: 'John Doe' },
            age: { type: 'integer', description: 'User age', default: 30 },
            score: { type: 'number', description: 'User score', default: 95.5 },
            status: {
              type: 'string',
              description: 'User status',
              enum: ['active', 'inactive', 'pending'],
              default: 'active',
            },
            verified: { type: 'boolean', description: 'Verification status', default: true },
          },
          required: [],
        },
      },
    }),
    answer: result => `Elicitation completed: ${elicitationOutcome(result)}`,
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicitation with the enum schema variants (SEP-1330)',
    inputSchema: NO_ARGS,
    ask: () => ({
      method: 'elicitation/create',
      params: {
        message: 'Please select options from the enum fields',
        requestedSchema: {
          type: 'object',
          properties: {
            untitledSingle: {
              type: 'string',
              description: 'Select one option',
              enum: ['option1', 'option2', 'option3'],
            },
            titledSingle: {
              type: 'string',
              description: 'Select one option with titles',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: {
              type: 'string',
              description: 'Select one option (legacy)',
              enum: ['opt1', 'opt2', 'opt3'],
              enumNames: ['Option One', 'Option Two', 'Option Three'],
            },
            untitledMulti: {
              type: 'array',
              description: 'Select multiple options',
              minItems: 1,
              maxItems: 3,
              items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            },
            titledMulti: {
              type: 'array',
              description: 'Select multiple options with titles',
              minItems: 1,
              maxItems: 3,
              items: { anyOf: ENUM_CHOICES },
            },
          },
          required: [],
        },
      },
    }),
    answer: result => `Elicitation completed: ${elicitationOutcome(result)}`,
  },
];

/** Which list a trigger tool changed. */
export type ChangeKind = 'tools' | 'prompts';

/** What the trigger tools flip; shared by every server instance (or session) of one backend. */
export interface ChangeToggles {
  extraTool: boolean;
  extraPrompt: boolean;
}

const changedText = (text: string) => ({ content: [{ type: 'text' as const, text }] });

/**
 * `test_trigger_tool_change` and `test_trigger_prompt_change` (each flips its flag and announces
 * the change with `announce`, the era's own way), and `test_dynamic_tool` while it is added.
 */
export function changeTools(toggles: ChangeToggles, announce: (kind: ChangeKind) => Promise<void>) {
  const tools = [
    {
      name: 'test_trigger_tool_change',
      description: 'Adds or removes test_dynamic_tool (sends tools/list_changed)',
      inputSchema: NO_ARGS,
      run: async () => {
        toggles.extraTool = !toggles.extraTool;
        await announce('tools');
        return changedText(`test_dynamic_tool ${toggles.extraTool ? 'added' : 'removed'}`);
      },
    },
    {
      name: 'test_trigger_prompt_change',
      description: 'Adds or removes test_dynamic_prompt (sends prompts/list_changed)',
      inputSchema: NO_ARGS,
      run: async () => {
        toggles.extraPrompt = !toggles.extraPrompt;
        await announce('prompts');
        return changedText(`test_dynamic_prompt ${toggles.extraPrompt ? 'added' : 'removed'}`);
      },
    },
  ];
  if (toggles.extraTool) {
    tools.push({
      name: 'test_dynamic_tool',
      description: 'Present while test_trigger_tool_change has added it',
      inputSchema: NO_ARGS,
      run: async () => changedText('dynamic'),
    });
  }
  return tools;
}
