/**
 * Finds the project a user means: exact id, else the name case-insensitively (whole name, then a
 * part of it). Several candidates are listed back rather than guessed; none gets close names.
 */
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
  const lower = wanted.toLowerCase();
  const exact = projects.filter((p) => p.name.trim().toLowerCase() === lower);
  if (exact.length > 0) return pick(exact);
  const partial = lower === '' ? [] : projects.filter((p) => p.name.toLowerCase().includes(lower));
  if (partial.length > 0) return pick(partial);
  return { status: 'not_found', suggestions: closest(lower, projects) };
}

function pick<P extends NamedProject>(candidates: P[]): ProjectMatch<P> {
  const [only] = candidates;
  return candidates.length === 1 && only ? { status: 'found', project: only } : { status: 'ambiguous', candidates };
}

function closest<P extends NamedProject>(lower: string, projects: readonly P[]): P[] {
  const limit = Math.max(2, Math.floor(lower.length / 3));
  return projects
    .map((project) => ({ project, distance: editDistance(lower, project.name.toLowerCase()) }))
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
