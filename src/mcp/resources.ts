/**
 * The MCP server's resources: `memory://recall` — the reviewed memories a session in this repository starts with, the
 * same text `engram context sync` writes into context files (for clients that read resources rather than call
 * tools) — and the template `engram://docs/{id}`, one entry of the repository's living knowledge docs. Both only
 * read; each answers through one operation of services/ops, like the tools.
 * @module
 */
import type { Annotations as ResourceAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ToolContext } from './tools.js';

/** A fixed resource. */
export interface ResourceDef {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  annotations: ResourceAnnotations;
  read(context: ToolContext): Promise<string>;
}

/** A resource template: `match` takes a URI apart, or returns null when the URI is not of this template. */
export interface ResourceTemplateDef {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  annotations: ResourceAnnotations;
  match(uri: string): Record<string, string> | null;
  read(params: Record<string, string>, context: ToolContext): Promise<string>;
}

export const RESOURCES: readonly ResourceDef[] = [
  {
    uri: 'memory://recall',
    name: 'recall',
    title: 'Engram: memories for this repository',
    description:
      "The reviewed memories a session in this repository starts with — pinned ones, then the project's most useful — as " +
      'Markdown within the context budget: the text `engram context sync` writes into AGENTS.md or CLAUDE.md. Only active ' +
      'engrams a person has let through review; nothing that waits for review.',
    mimeType: 'text/markdown',
    annotations: { audience: ['assistant'], priority: 0.9 },
    async read({ call }) {
      return (await call<{ text: string }>('context.recall', {})).text;
    },
  },
];

const DOC_ID = /^engram:\/\/docs\/([A-Za-z]\d{3,})$/;

export const RESOURCE_TEMPLATES: readonly ResourceTemplateDef[] = [
  {
    uriTemplate: 'engram://docs/{id}',
    name: 'doc-entry',
    title: 'Engram: knowledge doc entry',
    description:
      "One entry of this repository's living knowledge docs by its stable id — a concept C###, a claim E### or a workflow " +
      'W### — as Markdown, with its graveyard history (the same entry the engram_doc tool returns as JSON).',
    mimeType: 'text/markdown',
    annotations: { audience: ['assistant', 'user'], priority: 0.5 },
    match(uri) {
      const found = DOC_ID.exec(uri);
      return found ? { id: found[1] as string } : null;
    },
    async read({ id }, { call }) {
      const entry = await call<{ text: string; graveyard: Array<{ text: string }> }>('docs.entry', { id });
      // A graveyard-only entry's text is its first graveyard block: shown once.
      return [entry.text, ...entry.graveyard.map((block) => block.text).filter((text) => text !== entry.text)].join('\n\n');
    },
  },
];
