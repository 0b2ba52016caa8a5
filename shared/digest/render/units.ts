/** Values and changes with their units: "50.5 %", "−3.2 pts", "3.6, was 3.1 — worse", "±2.8 pts". */
import type { Scalar } from '../../read-api-types';
import type { MetricReading } from '../noise';
import { formatNumber, formatScalar, formatSigned, LEN } from './format';

/** Percent shares are shown as they are; fractions (0–1) as percent, so every share reads the same way. */
function shareFactor(reading: MetricReading): number {
  return reading.scale === 'fraction' ? 100 : 1;
}

/** Rounded for reading: one decimal for shares and positions. */
function rounded(n: number): number {
  return Math.round(n * 100) / 100;
}

/** A figure in the unit it is shown in (a fraction's share as percent), rounded for reading. */
export function shownValue(reading: MetricReading, value: number): number {
  return rounded(value * (reading.kind === 'share' ? shareFactor(reading) : 1));
}

/** The value with its unit; a non-numeric value as sent. */
export function valueText(reading: MetricReading, value: number | null, raw: Scalar): string {
  if (value === null) return formatScalar(raw, LEN.value);
  if (reading.kind === 'share') return `${formatNumber(rounded(value * shareFactor(reading)))} %`;
  return formatNumber(value);
}

/** A signed change with its unit: "−3.2 pts" for a share, "+2" otherwise; null without one. */
export function deltaText(reading: MetricReading, delta: number | null | undefined): string | null {
  if (delta === null || delta === undefined || !Number.isFinite(delta)) return null;
  const signed = formatSigned(rounded(delta * shareFactor(reading)));
  if (signed === null) return null;
  return reading.kind === 'share' ? `${signed} pts` : signed;
}

/** The normal variation of a figure at this run's sample: "±6.1 pts" for a share, "±0.3" otherwise. */
export function variationText(reading: MetricReading, halfWidth: number): string {
  const share = reading.kind === 'share';
  const width = Math.round(halfWidth * (share ? shareFactor(reading) : 1) * 10) / 10;
  return `±${formatNumber(width > 0 ? width : Math.round(halfWidth * 1000) / 1000)}${share ? ' pts' : ''}`;
}
