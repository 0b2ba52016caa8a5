/**
 * Resolves the CloudFormation intrinsic functions a synthesized template uses (Ref, Fn::GetAtt,
 * Fn::Join, Fn::Sub, Fn::Select, Fn::Split) against the values of locally created resources, so the
 * deploy rehearsal reads the template as CloudFormation would. Anything it cannot resolve throws,
 * naming the intrinsic and the logical id: a guessed value would check the wrong thing.
 */
import { isRecord } from '../../shared/util';

/** What CloudFormation returns for a resource: `Ref` and the `Fn::GetAtt` attributes. */
export interface ResourceValues {
  ref: string;
  attributes: Readonly<Record<string, string>>;
}

export interface ResolveContext {
  region: string;
  accountId: string;
  partition: string;
  stackName: string;
  urlSuffix: string;
  /** By logical id (parameters may be listed here too, with their value as `ref`). */
  resources: Readonly<Record<string, ResourceValues>>;
}

/** `Ref: AWS::NoValue` removes the property (or array element) that holds it. */
const NO_VALUE = Symbol('AWS::NoValue');

type Json = Record<string, unknown>;

export function resolveIntrinsics(value: unknown, ctx: ResolveContext): unknown {
  const resolved = resolve(value, ctx);
  return resolved === NO_VALUE ? undefined : resolved;
}

function resolve(value: unknown, ctx: ResolveContext): unknown {
  if (Array.isArray(value)) return value.map((item) => resolve(item, ctx)).filter((item) => item !== NO_VALUE);
  if (!isRecord(value)) return value;
  // An object is an intrinsic when its only key is `Ref` or `Fn::…`.
  const [name, ...others] = Object.keys(value);
  if (name !== undefined && others.length === 0 && (name === 'Ref' || name.startsWith('Fn::')))
    return applyIntrinsic(name, value[name], ctx);
  const out: Json = {};
  for (const [key, item] of Object.entries(value)) {
    const resolvedItem = resolve(item, ctx);
    if (resolvedItem !== NO_VALUE) out[key] = resolvedItem;
  }
  return out;
}

const INTRINSICS: Record<string, (argument: unknown, ctx: ResolveContext) => unknown> = {
  Ref: ref,
  'Fn::GetAtt': getAtt,
  'Fn::Join': join,
  'Fn::Sub': sub,
  'Fn::Select': select,
  'Fn::Split': split,
};

function applyIntrinsic(name: string, argument: unknown, ctx: ResolveContext): unknown {
  const apply = INTRINSICS[name];
  if (apply) return apply(argument, ctx);
  throw new Error(
    `unsupported intrinsic ${name} (${JSON.stringify(argument)}): the rehearsal resolves ${Object.keys(INTRINSICS).join(', ')}`,
  );
}

function pseudoParameter(name: string, ctx: ResolveContext): string | typeof NO_VALUE | undefined {
  const values: Record<string, string | typeof NO_VALUE> = {
    'AWS::Region': ctx.region,
    'AWS::AccountId': ctx.accountId,
    'AWS::Partition': ctx.partition,
    'AWS::URLSuffix': ctx.urlSuffix,
    'AWS::StackName': ctx.stackName,
    'AWS::NoValue': NO_VALUE,
  };
  return values[name];
}

function ref(argument: unknown, ctx: ResolveContext): string | typeof NO_VALUE {
  if (typeof argument !== 'string') throw new Error(`Ref needs a logical id or pseudo parameter name, got ${JSON.stringify(argument)}`);
  const pseudo = pseudoParameter(argument, ctx);
  if (pseudo !== undefined) return pseudo;
  if (argument.startsWith('AWS::')) throw new Error(`Ref ${argument}: unsupported pseudo parameter`);
  const resource = ctx.resources[argument];
  if (!resource) throw new Error(`Ref ${argument}: no local value for logical id ${argument}`);
  return resource.ref;
}

function getAtt(argument: unknown, ctx: ResolveContext): string {
  const parts = typeof argument === 'string' ? argument.split(/\.(.*)/s, 2) : argument;
  if (Array.isArray(parts) && parts.length === 2 && parts.every((part) => typeof part === 'string' && part !== '')) {
    return attributeOf(parts[0] as string, parts[1] as string, 'Fn::GetAtt', ctx);
  }
  throw new Error(`Fn::GetAtt needs [logicalId, attribute] or "logicalId.attribute", got ${JSON.stringify(argument)}`);
}

function attributeOf(logicalId: string, attribute: string, intrinsic: string, ctx: ResolveContext): string {
  const resource = ctx.resources[logicalId];
  if (!resource) throw new Error(`${intrinsic} ${logicalId}.${attribute}: no local value for logical id ${logicalId}`);
  const value = resource.attributes[attribute];
  if (value === undefined) {
    const known = Object.keys(resource.attributes).join(', ') || 'none';
    throw new Error(`${intrinsic} ${logicalId}.${attribute}: no local value for attribute ${attribute} of ${logicalId} (known: ${known})`);
  }
  return value;
}

function join(argument: unknown, ctx: ResolveContext): string {
  if (!Array.isArray(argument) || argument.length !== 2 || typeof argument[0] !== 'string') {
    throw new Error(`Fn::Join needs [delimiter, [values…]], got ${JSON.stringify(argument)}`);
  }
  const values = resolve(argument[1], ctx);
  if (!Array.isArray(values)) throw new Error(`Fn::Join: the values must resolve to a list, got ${JSON.stringify(values)}`);
  return values.map((item) => scalar(item, 'Fn::Join')).join(argument[0]);
}

function sub(argument: unknown, ctx: ResolveContext): string {
  const [text, variables] = subParts(argument, ctx);
  // ${!Name} is a literal ${Name}; ${Name} and ${Logical.Attr} are substituted.
  return text.replace(/\$\{(!?)([^}]*)\}/g, (_match, literal: string, name: string) => {
    if (literal) return `\${${name}}`;
    return subVariable(name.trim(), variables, ctx);
  });
}

function subParts(argument: unknown, ctx: ResolveContext): [string, Record<string, string>] {
  if (typeof argument === 'string') return [argument, {}];
  if (Array.isArray(argument) && argument.length === 2 && typeof argument[0] === 'string' && isRecord(argument[1])) {
    const variables: Record<string, string> = {};
    for (const [name, value] of Object.entries(argument[1])) variables[name] = scalar(resolve(value, ctx), `Fn::Sub variable ${name}`);
    return [argument[0], variables];
  }
  throw new Error(`Fn::Sub needs "text" or ["text", {variables}], got ${JSON.stringify(argument)}`);
}

function subVariable(name: string, variables: Record<string, string>, ctx: ResolveContext): string {
  const variable = variables[name];
  if (variable !== undefined) return variable;
  const pseudo = pseudoParameter(name, ctx);
  if (typeof pseudo === 'string') return pseudo;
  const dot = name.indexOf('.');
  if (dot > 0) return attributeOf(name.slice(0, dot), name.slice(dot + 1), 'Fn::Sub', ctx);
  const resource = ctx.resources[name];
  if (!resource) throw new Error(`Fn::Sub \${${name}}: no variable, pseudo parameter or local value for logical id ${name}`);
  return resource.ref;
}

function select(argument: unknown, ctx: ResolveContext): unknown {
  if (!Array.isArray(argument) || argument.length !== 2)
    throw new Error(`Fn::Select needs [index, [values…]], got ${JSON.stringify(argument)}`);
  const index = Number(resolve(argument[0], ctx));
  const values = resolve(argument[1], ctx);
  if (!Array.isArray(values)) throw new Error(`Fn::Select: the values must resolve to a list, got ${JSON.stringify(values)}`);
  if (!Number.isInteger(index) || index < 0 || index >= values.length) {
    throw new Error(`Fn::Select: index ${JSON.stringify(argument[0])} is outside the list of ${values.length}`);
  }
  return values[index];
}

function split(argument: unknown, ctx: ResolveContext): string[] {
  if (!Array.isArray(argument) || argument.length !== 2 || typeof argument[0] !== 'string' || argument[0] === '') {
    throw new Error(`Fn::Split needs [delimiter, text], got ${JSON.stringify(argument)}`);
  }
  return scalar(resolve(argument[1], ctx), 'Fn::Split').split(argument[0]);
}

function scalar(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`${where}: expected a string, got ${JSON.stringify(value)}`);
}
