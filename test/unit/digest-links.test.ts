import { describe, expect, it } from 'vitest';
import {
  assertDashboardUrlTemplate,
  dashboardUrlTemplateProblem,
  fillUrlTemplate,
  MAX_LINK_URL,
  mrkdwnLink,
} from '../../shared/digest/links';

const TEMPLATE = 'https://app.example.com/p/{project_id}/runs/{run_id}?prompt={prompt_id}';
const ALL = { project_id: 'P1', run_id: 'R1', prompt_id: 'Q1', asset_id: 'A1' };

describe('fillUrlTemplate', () => {
  it('fills every placeholder', () => {
    expect(fillUrlTemplate(TEMPLATE, ALL)).toBe('https://app.example.com/p/P1/runs/R1?prompt=Q1');
    expect(fillUrlTemplate('https://x.example/d/{asset_id}', ALL)).toBe('https://x.example/d/A1');
  });

  it('encodes values so they cannot change the path, the query or the mrkdwn link around them', () => {
    const url = fillUrlTemplate(TEMPLATE, { project_id: 'a b/../c', run_id: 'r?x=1&y', prompt_id: 'q|>#' });
    expect(url).toBe('https://app.example.com/p/a%20b%2F..%2Fc/runs/r%3Fx%3D1%26y?prompt=q%7C%3E%23');
  });

  it('encodes a lone surrogate as U+FFFD instead of throwing', () => {
    expect(fillUrlTemplate(TEMPLATE, { ...ALL, prompt_id: 'a\ud83db' })).toBe('https://app.example.com/p/P1/runs/R1?prompt=a%EF%BF%BDb');
    expect(fillUrlTemplate(TEMPLATE, { ...ALL, prompt_id: '👩' })).toBe('https://app.example.com/p/P1/runs/R1?prompt=%F0%9F%91%A9');
  });

  it('makes no link without a template or with a template that is not https', () => {
    expect(fillUrlTemplate(undefined, ALL)).toBeNull();
    expect(fillUrlTemplate('http://app.example.com/p/{project_id}', ALL)).toBeNull();
    expect(fillUrlTemplate('javascript:alert(1)//{project_id}', ALL)).toBeNull();
    expect(fillUrlTemplate('https://app.example.com/{nope}', ALL)).toBeNull();
  });

  it('cuts a missing value off with its query parameter or path segment, never leaving a placeholder', () => {
    expect(fillUrlTemplate(TEMPLATE, { project_id: 'P1', run_id: 'R1' })).toBe('https://app.example.com/p/P1/runs/R1');
    expect(fillUrlTemplate(TEMPLATE, { project_id: 'P1', run_id: 'R1', prompt_id: '' })).toBe('https://app.example.com/p/P1/runs/R1');
    expect(fillUrlTemplate('https://app.example.com/p/{project_id}/prompts/{prompt_id}', { project_id: 'P1' })).toBe(
      'https://app.example.com/p/P1/prompts',
    );
    expect(fillUrlTemplate(TEMPLATE, { project_id: 'P1' })).toBe('https://app.example.com/p/P1/runs');
  });

  it('makes no link when a missing value would leave only the host', () => {
    expect(fillUrlTemplate('https://app.example.com/{prompt_id}', { project_id: 'P1' })).toBeNull();
    expect(fillUrlTemplate('https://app.example.com/?p={project_id}', {})).toBeNull();
  });

  it('makes no link longer than MAX_LINK_URL (a cut link would break the text around it)', () => {
    const id = '\u200b'.repeat(120); // 9 characters each once encoded
    expect(fillUrlTemplate(TEMPLATE, { ...ALL, project_id: id })).toBeNull();
    const fits = 'x'.repeat(MAX_LINK_URL - 'https://app.example.com/p//runs/R1?prompt=Q1'.length);
    expect(fillUrlTemplate(TEMPLATE, { ...ALL, project_id: fits })).toHaveLength(MAX_LINK_URL);
    expect(fillUrlTemplate(TEMPLATE, { ...ALL, project_id: `${fits}x` })).toBeNull();
  });

  it('a template without placeholders links as it is', () => {
    expect(fillUrlTemplate('https://app.example.com/home', {})).toBe('https://app.example.com/home');
  });
});

describe('dashboardUrlTemplateProblem', () => {
  it.each([
    ['http://app.example.com/{project_id}', /https/],
    ['https://app.example.com/{projectId}', /unknown placeholder \{projectId\}/],
    ['https://app.example.com/{project_id', /unbalanced/],
    ['https://app.example.com/ {project_id}', /spaces/],
    ['https://app.example.com/a|b', /characters/],
    ['https://app.example.com/<x>', /characters/],
    [`https://app.example.com/${'a'.repeat(1000)}`, /longer than 1000/],
    ['https://', /URL/],
  ])('refuses %s', (template, problem) => {
    expect(dashboardUrlTemplateProblem(template)).toMatch(problem);
    expect(() => assertDashboardUrlTemplate(template)).toThrow(problem);
  });

  it('accepts an https template with known placeholders', () => {
    expect(dashboardUrlTemplateProblem(TEMPLATE)).toBeNull();
    expect(() => assertDashboardUrlTemplate(TEMPLATE)).not.toThrow();
  });
});

describe('mrkdwnLink', () => {
  it('links the label; `&` in the URL escaped and `|` in the label replaced, so the link cannot be split', () => {
    expect(mrkdwnLink('https://a.example/x?a=1&b=2', 'Acme | Co')).toBe('<https://a.example/x?a=1&amp;b=2|Acme ¦ Co>');
  });

  it('is just the label without a URL or without a label', () => {
    expect(mrkdwnLink(null, 'Acme')).toBe('Acme');
    expect(mrkdwnLink('https://a.example', '')).toBe('');
  });
});
