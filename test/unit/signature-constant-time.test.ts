/**
 * A static check: signature comparisons in shared/signature.ts go through `timingSafeEqual`. A
 * comparison that returns early (`Buffer.equals`, `===` on digests) behaves identically, so no
 * behavioural test can see it; only the code's shape can. Read with the type checker, so a Buffer
 * compared under any name is found.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const FILE = fileURLToPath(new URL('../../shared/signature.ts', import.meta.url));
const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);
/** Types whose contents are secret-derived bytes (a Buffer, its string forms come from .toString/.digest). */
const BYTES = /\b(Buffer|Uint8Array|ArrayBufferView|Hmac)\b/;

interface Finding {
  line: number;
  text: string;
}

function analyse(): { timingSafeCalls: number; findings: Finding[] } {
  const program = ts.createProgram([FILE], {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: ['node'],
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(FILE);
  if (!source) throw new Error(`cannot read ${FILE}`);
  const isBytes = (node: ts.Node): boolean => BYTES.test(checker.typeToString(checker.getTypeAtLocation(node)));
  /** An expression that turns bytes into something comparable with ===: buf.toString(), hmac.digest('hex'). */
  const fromBytes = (node: ts.Expression): boolean =>
    isBytes(node) || (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && isBytes(node.expression.expression));
  const findings: Finding[] = [];
  let timingSafeCalls = 0;
  const report = (node: ts.Node): void => {
    findings.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.getText() });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
      if (name === 'timingSafeEqual') timingSafeCalls += 1;
      if (
        (name === 'equals' || name === 'compare') &&
        ts.isPropertyAccessExpression(callee) &&
        (isBytes(callee.expression) || callee.expression.getText() === 'Buffer')
      )
        report(node);
    }
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind) && (fromBytes(node.left) || fromBytes(node.right)))
      report(node);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { timingSafeCalls, findings };
}

describe('signature comparison', () => {
  const { timingSafeCalls, findings } = analyse();

  it('goes through timingSafeEqual', () => {
    expect(timingSafeCalls).toBeGreaterThan(0);
  });

  it('never compares bytes or their string forms with an early-exit comparison', () => {
    expect(findings).toEqual([]);
  });
});
