/**
 * The read API's resources as the bridge uses them (spec §2, §4), after tolerant parsing.
 * Shapes the spec leaves "not shown" (per-engine rows, alerts, metric value types, extra gap fields)
 * are kept generically as ordered scalar fields so they can be rendered whatever they hold.
 */

export type Scalar = string | number | boolean | null;

/** Scalar fields of an object whose field names the spec does not show, in the order the API sent them. */
export type GenericRow = ReadonlyArray<readonly [field: string, value: Scalar]>;

export interface Project {
  id: string;
  name: string;
  industry: string | null;
}

export interface Metric {
  label: string;
  value: Scalar;
  caption: string | null;
}

export interface VisibilityOverview {
  metrics: Metric[];
  /** One row per AI engine. */
  engines: GenericRow[];
  alerts: GenericRow[];
}

export interface Gap {
  prompt_id: string;
  prompt_ref: Scalar;
  prompt_text: string;
  platforms_losing: string[];
  top_competitor: string;
  /** Other scalar fields the API sent (e.g. a "getting worse" flag, name not shown). */
  extra: GenericRow;
}

export interface Probe {
  id: string;
  reasoning_card_id: string | null;
  /** The engine the result was taken on, when the result names one (engine/platform/model field). */
  engine?: string | null | undefined;
}

export interface Reason {
  impact: string;
  category: string;
  detail: string;
}

export interface ReasoningCard {
  reasons: Reason[];
  /** The engine of the result the card belongs to, when known (shown as "on <engine>"). */
  engine?: string | null | undefined;
}
