/**
 * Finds the project a user means: exact id, else the name case-insensitively (whole name, then a
 * part of it). Several candidates are listed back rather than guessed; none gets close names.
 * Names and ids are compared as replies show them (sanitized: see `shownAs`), so a name or id copied
 * from a reply finds its project.
 */
import { neutraliseFormatting, stripInvisible } from '../slack-text';

export interface NamedProject {
  id: string;
  name: string;
}

export type ProjectMatch<P extends NamedProject> =
  { status: 'found'; project: P } | { status: 'ambiguous'; candidates: P[] } | { status: 'not_found'; suggestions: P[] };

const MAX_SUGGESTIONS = 3;

export function matchProject<P extends NamedProject>(query: string, projects: readonly P[]): ProjectMatch<P> {
  const wanted = query.trim();
  const byId = projects.find((p) => p.id === wanted);
  if (byId) return { status: 'found', project: byId };
  // Two ids can show alike (`a_b`, `aˍb`): then both are listed back, never one guessed.
  const byShownId = projects.filter((p) => shownAs(p.id) === shownAs(wanted));
  if (byShownId.length > 0) return pick(byShownId);
  const lower = shownAs(wanted).toLowerCase();
  const exact = projects.filter((p) => shownAs(p.name).toLowerCase() === lower);
  if (exact.length > 0) return pick(exact);
  const partial = lower === '' ? [] : projects.filter((p) => shownAs(p.name).toLowerCase().includes(lower));
  if (partial.length > 0) return pick(partial);
  return { status: 'not_found', suggestions: closest(lower, projects) };
}

/** Text as a reply shows it (before escaping and cutting): no invisible characters, one space between words, style markers as look-alikes. */
function shownAs(text: string): string {
  return neutraliseFormatting(stripInvisible(text).replace(/\s+/g, ' ').trim());
}

function pick<P extends NamedProject>(candidates: P[]): ProjectMatch<P> {
  const [only] = candidates;
  return candidates.length === 1 && only ? { status: 'found', project: only } : { status: 'ambiguous', candidates };
}

function closest<P extends NamedProject>(lower: string, projects: readonly P[]): P[] {
  const limit = Math.max(2, Math.floor(lower.length / 3));
  return projects
    .map((project) => ({ project, distance: editDistance(lower, shownAs(project.name).toLowerCase()) }))
    .filter((scored) => scored.distance <= limit)
    .sort((a, b) => a.distance - b.distance)
    .slice(0, MAX_SUGGESTIONS)
    .map((scored) => scored.project);
}

/** Levenshtein distance, capped input length so a pasted essay costs nothing. */
export function editDistance(a: string, b: string): number {
  const left = a.slice(0, 64);
  const right = b.slice(0, 64);
  let previous = Array.from({ length: right.length + 1 }, (_, i) => i);
  for (let i = 1; i <= left.length; i++) {
    const current = [i];
    for (let j = 1; j <= right.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (left[i - 1] === right[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}
