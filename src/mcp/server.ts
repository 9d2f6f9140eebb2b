/**
 * The MCP protocol side: tools/list and tools/call, resources/list, resources/templates/list and resources/read on the
 * SDK's `Server`. Each tool's zod schema is listed as JSON Schema and parses the arguments once; an operation's
 * EngramError becomes a tool result with `isError: true` and a one-line reason; a tool that is not registered
 * (unknown, or not in the selected profiles) is a protocol error, as is a resource that does not exist.
 * @module
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { isEngramError, VERSION, type Logger } from '../core/index.js';
import { RESOURCE_TEMPLATES, RESOURCES, type ResourceDef, type ResourceTemplateDef } from './resources.js';
import type { ToolContext, ToolDef } from './tools.js';

/** The MCP spec's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

/** Claude Code keeps a tool marked like this loaded instead of deferring it behind its tool search. */
const ALWAYS_LOAD = { 'anthropic/alwaysLoad': true };

/** One line: the reason an agent reads, without stack or newlines. */
const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

/** The initialize instructions: when to call which tool, in two sentences, for the tools this server has. */
export function instructions(tools: ReadonlySet<string>): string {
  const has = (name: string) => tools.has(name);
  if (has('engram_search') || has('engram_add')) {
    return (
      'Engram is long-term memory shared across your sessions: call engram_search before work an earlier session may have covered, ' +
      'and engram_add (or mem_save for a structured observation) right after you learn something worth keeping — a fix, a decision, ' +
      'a convention, a user preference. When an [ENGRAM] memory you were shown was wrong or did not apply, call engram_feedback ' +
      '(engram_deprecate when it is outdated), and call engram_explain with file:start-end to learn which sessions wrote those lines and why.'
    );
  }
  return (
    'Engram provides persistent memory across sessions: call mem_context at session start, mem_search before work past sessions may ' +
    'have covered and mem_get_observation for a full result, and mem_save proactively after every decision, bug fix, discovery or ' +
    'convention. Before ending, call mem_session_summary; the other tools (update, topic keys, timeline, passive capture) load on demand.'
  );
}

/** Options for {@link createMcpServer}. */
export interface McpServerOptions {
  tools: readonly ToolDef[];
  /** @default RESOURCES */
  resources?: readonly ResourceDef[];
  /** @default RESOURCE_TEMPLATES */
  templates?: readonly ResourceTemplateDef[];
  context: ToolContext;
  log: Logger;
}

/** An SDK server with the given tools registered (not yet connected). */
export function createMcpServer(options: McpServerOptions): Server {
  const { tools, context, log } = options;
  const resources = options.resources ?? RESOURCES;
  const templates = options.templates ?? RESOURCE_TEMPLATES;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const server = new Server(
    { name: 'engram', version: VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: instructions(new Set(byName.keys())) },
  );
  // Built on the first tools/list, not before initialize is answered: turning 25 zod schemas into JSON Schema is
  // the one noticeable cost of starting.
  let listed: unknown[] | undefined;
  const list = () => (listed ??= tools.map((tool) => ({
    name: tool.name,
    title: tool.annotations.title,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.schema, { target: 'draft-7', io: 'input' }) as { type: 'object' },
    annotations: tool.annotations,
    // Core tools stay loaded in clients that defer tools (Claude Code reads the _meta key); the rest carry the Go
    // engram's defer_loading flag, so clients that read it may load them on demand.
    ...(tool.core ? { _meta: ALWAYS_LOAD } : { defer_loading: true }),
  })));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: list() }) as never);
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    const started = performance.now();
    const failed = (reason: string): CallToolResult => ({ content: [{ type: 'text', text: oneLine(reason) }], isError: true });
    const parsed = tool.schema.safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ');
      log.info('tool call refused', { tool: tool.name, issues });
      return failed(`Input validation error: Invalid arguments for tool ${tool.name}: ${issues}`);
    }
    try {
      const text = await tool.run(parsed.data as Record<string, unknown>, context);
      log.info('tool call', { tool: tool.name, ms: Math.round(performance.now() - started) });
      return { content: [{ type: 'text', text }] };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (isEngramError(error) && error.code !== 'INTERNAL') {
        log.info('tool call failed', { tool: tool.name, code: error.code, message });
      } else {
        log.error('tool call failed', { tool: tool.name, error });
      }
      return failed(tool.failure !== null ? `${tool.failure}${message}` : `${isEngramError(error) ? error.code : 'INTERNAL'}: ${message}`);
    }
  });

  // Listed without their functions.
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: resources.map(({ read: _read, ...listed }) => listed) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: templates.map(({ read: _read, match: _match, ...listed }) => listed),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request): Promise<ReadResourceResult> => {
    const { uri } = request.params;
    const started = performance.now();
    const fixed = resources.find((resource) => resource.uri === uri);
    const template = fixed ? undefined : templates.map((candidate) => ({ candidate, params: candidate.match(uri) })).find((found) => found.params);
    if (!fixed && !template) throw new McpError(RESOURCE_NOT_FOUND, `Resource ${uri} not found`, { uri });
    try {
      const text = fixed ? await fixed.read(context) : await template!.candidate.read(template!.params!, context);
      log.info('resource read', { uri, ms: Math.round(performance.now() - started) });
      return { contents: [{ uri, mimeType: (fixed ?? template!.candidate).mimeType, text }] };
    } catch (error) {
      const message = oneLine(error instanceof Error ? error.message : String(error));
      if (!isEngramError(error) || error.code === 'INTERNAL') log.error('resource read failed', { uri, error });
      else log.info('resource read failed', { uri, code: error.code, message });
      // A resource has no error result: the reason travels as a protocol error, with the spec's code where one fits.
      const code = !isEngramError(error)
        ? ErrorCode.InternalError
        : error.code === 'NOT_FOUND'
          ? RESOURCE_NOT_FOUND
          : error.code === 'INVALID_INPUT'
            ? ErrorCode.InvalidParams
            : ErrorCode.InternalError;
      throw new McpError(code, `${isEngramError(error) ? error.code : 'INTERNAL'}: ${message}`, { uri });
    }
  });
  return server;
}
