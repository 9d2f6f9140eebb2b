import { join } from 'node:path';
import type { KnowledgeConfig } from './config.js';
import { docPaths } from './config.js';
import { skeleton } from './init.js';
import { appendBlock, stubLine } from './graveyard.js';
import { formatId } from './ids.js';
import { DOC_ROLES, isStableId, type DocRole, type IdPrefix } from './parse.js';
import { currentDocs, saveSnapshot, FOLD_DIR } from './snapshot.js';
import { writeFileAtomic } from './_atomic.js';

/**
 * Path C (seed 002, "Adopt existing v2 docs"), mechanical: v2 docs keyed by name become v3 docs keyed by id.
 * Ids are backfilled in document order, entries that describe how the team works move to the workflow registry,
 * DEAD/EVOLVED concepts and refuted claims move whole to their graveyards leaving stubs, and names in reference
 * fields become ids. The originals are kept in `.engram/fold/adopt-before/`. No model is called.
 */

/** What adoption did. */
export interface AdoptReport {
  assigned: Array<{ id: string; name: string; doc: string }>;
  workflows: Array<{ id: string; name: string; from: string }>;
  graveyarded: string[];
  references: number;
  backup: string;
}

interface Block {
  id: string | null;
  name: string;
  status: string | null;
  modifier: string | null;
  arrow: string | null;
  body: string[];
}

const WORKFLOW_WORDS = /\b(workflow|process|protocol|procedure|methodology|checklist|convention|playbook|runbook|review|handoff)\b/i;
const STATUS_DEFAULT: Record<IdPrefix, string> = { C: 'ACTIVE', E: 'unverified', W: 'CURRENT' };
const VALID: Record<IdPrefix, string[]> = {
  C: ['ACTIVE', 'DEAD', 'EVOLVED'],
  E: ['BELIEVED', 'CONTESTED', 'UNVERIFIED', 'REFUTED'],
  W: ['CURRENT', 'SUPERSEDED', 'MERGED'],
};
const REFERENCE_FIELDS = /^(\s*(?:[-*+]\s+)?\*\*(?:Relationship|Related concepts|Supersedes|Replaced by|Related|See also)\s*:\*\*)(.*)$/i;

/** Splits a doc into its preamble and `##` blocks (heading fields parsed, ids kept when present). */
function blocks(text: string): { preamble: string[]; blocks: Block[] } {
  const lines = text.split(/\r?\n/);
  const preamble: string[] = [];
  const out: Block[] = [];
  let current: Block | null = null;
  for (const line of lines) {
    const heading = /^##(?!#)\s*(.*)$/.exec(line);
    if (heading) {
      const raw = heading[1]!.trim();
      const arrow = /\s*(?:→|->)\s*(.*)$/.exec(raw);
      const head = arrow ? raw.slice(0, arrow.index) : raw;
      const id = /^([CEW]\d{3,})\s*:\s*/.exec(head);
      const rest = id ? head.slice(id[0].length) : head;
      const status = /^(.*?)\s*\(([^()]*)\)\s*$/.exec(rest);
      const parts = status ? status[2]!.split(/\s+[—–-]\s+/) : [];
      current = {
        id: id ? id[1]! : null,
        name: (status ? status[1]! : rest).trim(),
        status: parts[0]?.trim() || null,
        modifier: parts.slice(1).join(' — ') || null,
        arrow: arrow ? arrow[1]!.trim() : null,
        body: [],
      };
      out.push(current);
    } else if (current) current.body.push(line);
    else preamble.push(line);
  }
  return { preamble, blocks: out };
}

/** The status of a v2 block: its parenthesised status, else a `Status:` field, else the category default. */
function statusOf(block: Block, prefix: IdPrefix): string {
  const field = block.body.map((line) => /^\s*(?:[-*+]\s+)?\**Status:?\**:?\s*(\w+)/i.exec(line)?.[1]).find(Boolean);
  for (const candidate of [block.status, field]) {
    const word = candidate?.split(/\s+/)[0]?.toUpperCase();
    if (word && VALID[prefix].includes(word)) return prefix === 'E' ? word.toLowerCase() : word;
  }
  return STATUS_DEFAULT[prefix];
}

const isStub = (status: string): boolean => ['DEAD', 'EVOLVED', 'REFUTED', 'SUPERSEDED', 'MERGED'].includes(status.toUpperCase());

/** Adopts the docs under `root` in place. `next` gives the next number per prefix (from the server's counters). */
export function adoptDocs(root: string, config: KnowledgeConfig, next: Record<IdPrefix, number>): AdoptReport {
  const paths = docPaths(config, root);
  const before = currentDocs(paths);
  const backup = saveSnapshot(join(root, FOLD_DIR), 'adopt-before', before);
  const report: AdoptReport = { assigned: [], workflows: [], graveyarded: [], references: 0, backup };
  const counter = { ...next };
  const used = new Set<string>();
  for (const role of DOC_ROLES) for (const match of (before[role] ?? '').matchAll(/\b([CEW]\d{3,})\b/g)) used.add(match[1]!);
  const take = (prefix: IdPrefix): string => {
    let id = formatId(prefix, counter[prefix]++);
    while (used.has(id)) id = formatId(prefix, counter[prefix]++);
    used.add(id);
    return id;
  };

  const parsed = {
    concepts: blocks(before.concepts ?? ''),
    epistemic: blocks(before.epistemic ?? ''),
    workflows: blocks(before.workflows ?? ''),
  };
  const names = new Map<string, string>(); // name or alias → id
  const finals: Record<'concepts' | 'epistemic' | 'workflows', Array<Block & { id: string; status: string }>> = { concepts: [], epistemic: [], workflows: [] };
  const prefixOf = { concepts: 'C', epistemic: 'E', workflows: 'W' } as const;
  // Workflows first keep their ids; then concepts and claims in document order, workflow-like ones moving over.
  for (const role of ['workflows', 'concepts', 'epistemic'] as const) {
    for (const block of parsed[role].blocks) {
      const workflowLike = role !== 'workflows' && !block.id && WORKFLOW_WORDS.test(block.name);
      const target = workflowLike ? 'workflows' : role;
      const prefix = prefixOf[target];
      const id = block.id && isStableId(block.id) && block.id[0] === prefix ? block.id : take(prefix);
      const status = statusOf(block, prefix);
      if (!block.id || block.id !== id) report.assigned.push({ id, name: block.name, doc: paths[target] });
      if (workflowLike) {
        report.workflows.push({ id, name: block.name, from: paths[role] });
        const hasContext = block.body.some((line) => /\*\*Context:\*\*/i.test(line));
        const hasMethod = block.body.some((line) => /\*\*(Current method|Trigger[^*]*):\*\*/i.test(line));
        const summary = block.body.find((line) => line.trim() !== '' && !/^\s*[-*+]\s+\*\*/.test(line))?.trim() ?? block.name;
        block.body = [
          ...(hasContext ? [] : [`- **Context:** ${block.name} (adopted from ${role === 'concepts' ? 'the concept registry' : 'the epistemic state'})`]),
          ...(hasMethod ? [] : [`- **Current method:** ${summary.replace(/^[-*+]\s+/, '')}`]),
          ...block.body,
        ];
      }
      finals[target].push({ ...block, id, status });
      names.set(block.name, id);
      for (const line of block.body) {
        const aliases = /\*\*Aliases:\*\*\s*(.*)$/i.exec(line)?.[1];
        if (aliases) for (const alias of aliases.split(',').map((part) => part.trim().replace(/`/g, '')).filter(Boolean)) if (!names.has(alias)) names.set(alias, id);
      }
    }
  }

  // Names in reference fields and arrows become ids (longest names first, whole words only).
  const ordered = [...names.entries()].sort((a, b) => b[0].length - a[0].length);
  const rewrite = (text: string): string => {
    let out = text;
    for (const [name, id] of ordered) {
      const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const pattern = new RegExp(`(^|[\\s,;(])\`?${escaped}\`?(?=$|[\\s,;)])(?!\\s*\\()`, 'g');
      out = out.replace(pattern, (_match, lead: string) => {
        report.references++;
        return `${lead}${id} (${name})`;
      });
    }
    return out;
  };

  const graveyards = { concepts: before.conceptGraveyard || skeleton('conceptGraveyard'), epistemic: before.epistemicGraveyard || skeleton('epistemicGraveyard') };
  const render = (role: 'concepts' | 'epistemic' | 'workflows'): string => {
    const out = [...parsed[role].preamble];
    for (const block of finals[role]) {
      const body = block.body.map((line) => {
        const field = REFERENCE_FIELDS.exec(line);
        return field ? `${field[1]}${rewrite(field[2]!)}` : line;
      });
      while (body.length && body.at(-1)!.trim() === '') body.pop();
      const modifier = block.modifier ? ` — ${block.modifier}` : '';
      if (isStub(block.status)) {
        if (role === 'workflows') {
          const target = block.arrow ? (names.get(block.arrow) ?? (/^W\d{3,}/.exec(block.arrow)?.[0] ?? block.arrow)) : '';
          out.push(`## ${block.id}: ${block.name} (${block.status})${target ? ` → ${target}` : ''}`, '');
          continue;
        }
        const graveyardKey = role === 'concepts' ? 'concepts' : 'epistemic';
        const graveyardFile = role === 'concepts' ? paths.conceptGraveyard : paths.epistemicGraveyard;
        const hasBody = body.some((line) => line.trim() !== '');
        if (hasBody && !new RegExp(`^##\\s+${block.id}\\b`, 'm').test(graveyards[graveyardKey])) {
          graveyards[graveyardKey] = appendBlock(graveyards[graveyardKey], [`## ${block.id}: ${block.name} (${block.status})`, ...body].join('\n'));
          report.graveyarded.push(block.id);
        }
        out.push(stubLine(block, graveyardFile), '');
        continue;
      }
      out.push(`## ${block.id}: ${block.name} (${block.status}${modifier})`, ...body, '');
    }
    return `${out.join('\n').replace(/\n{3,}/g, '\n\n').replace(/\s+$/, '')}\n`;
  };

  const written: Partial<Record<DocRole, string>> = {
    concepts: render('concepts'),
    epistemic: render('epistemic'),
    workflows: render('workflows'),
    conceptGraveyard: graveyards.concepts,
    epistemicGraveyard: graveyards.epistemic,
  };
  for (const [role, text] of Object.entries(written) as Array<[DocRole, string]>) {
    if (text !== (before[role] ?? '')) writeFileAtomic(paths[role], text.endsWith('\n') ? text : `${text}\n`);
  }
  return report;
}
