"""TypeScript cells for the stripper's tests (tests/engine/test_typestrip.py: each is stripped,
compared with npm ts-blank-space and, when it is a script, run in V8 for its expected value) and
the kernel's (tests/kernel/test_typescript_kernel.py, tests/engine/test_prepare.py), with the
random programs both generate. Kept apart so the tests stay readable.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from hypothesis import strategies as st


@dataclass(frozen=True)
class Case:
    name: str
    ts: str
    expected: object = None  # the script's completion value in V8; None: not run (modules)
    same_as_reference: bool = True  # False: we differ from ts-blank-space on purpose (see reason)
    reason: str = ""
    tree_sitter_js: bool = True  # False: valid JavaScript that tree-sitter-javascript rejects


CASES: list[Case] = [
    # --- annotations everywhere -----------------------------------------------------------
    Case(
        "variables",
        "let a: number = 1, b!: string, c: Array<{ x: number }> = [{ x: 2 }];\nconst d: readonly string[] = ['z'];\na + c[0].x + d[0]",
        "3z",
    ),
    Case(
        "parameters and returns",
        "function add(a: number, b: number = 2, ...rest: number[]): number {\n  return a + b + rest.reduce((s: number, x: number): number => s + x, 0)\n}\nadd(1) + add(1, 1, 1, 1)",
        7,
    ),
    Case(
        "destructuring",
        "const { p, q }: { p: number; q: string } = { p: 1, q: 'q' };\nconst [h, ...t]: [number, ...number[]] = [1, 2, 3];\np + q + h + t.length",
        "1q12",
    ),
    Case("catch clause", "let m: string = '';\ntry { throw new Error('boom') } catch (e: unknown) { m = (e as Error).message }\nm", "boom"),
    Case(
        "function types in annotations",
        "const apply: (f: (x: number) => number, v: number) => number = (f, v) => f(v);\nconst mk: new () => object = Object;\napply(x => x * 2, 21) + typeof mk",
        "42function",
    ),
    Case(
        "advanced types",
        "type K = keyof { a: 1; b: 2 };\ntype C<T> = T extends string ? 'str' : 'other';\ntype M = { [P in K]?: number };\ntype L = `id-${string}`;\nconst v: M = { a: 1 } satisfies M;\nconst w: typeof v['a'] = 3;\nconst tup: [first: number, second?: string] = [1];\nv.a! + w + tup.length",
        5,
    ),
    Case("optional params", "function f(a?: number, b?: string): string { return `${a}-${b}` }\nf() + f(1, 'x')", "undefined-undefined1-x"),
    Case(
        "type predicate",
        "function isStr(x: unknown): x is string { return typeof x === 'string' }\nconst pick = (x: unknown): x is number => typeof x === 'number';\n[isStr('a'), pick('a')].join()",
        "true,false",
    ),
    Case(
        "asserts",
        "function assert(c: unknown, msg?: string): asserts c { if (!c) throw new Error(msg) }\nfunction assertStr(x: unknown): asserts x is string {}\nassert(1); assertStr('s'); 'ok'",
        "ok",
    ),
    Case("unique symbol", "declare const tag: unique symbol;\nconst sym: unique symbol = Symbol('s');\ntypeof sym", "symbol"),
    Case(
        "this parameter",
        "function hello(this: { name: string }, greeting: string): string { return greeting + ' ' + this.name }\nhello.call({ name: 'ts' }, 'hi')",
        "hi ts",
    ),
    Case("this parameter alone", "function who(this: { n: number }) { return this.n }\nwho.call({ n: 4 })", 4),
    Case("this parameter with comment", "function f(this: Window /* the receiver */, x: number) { return x }\nf.call(null, 5)", 5),
    Case(
        "comments inside types",
        "let x: /* a number */ number = 1;\ntype T = {\n  // the id\n  id: string; /* trailing */\n};\nfunction f(a: /* inline */ string /* after */): void /* ret */ {}\nx",
        1,
    ),
    # --- generics -----------------------------------------------------------------------------
    Case(
        "generic calls and new",
        "function id<T>(x: T): T { return x }\nconst m = new Map<string, number[]>();\nm.set('k', [id<number>(1)]);\nconst s = new Set<string>;\nJSON.stringify([...m]) + s.size",
        '[["k",[1]]]0',
    ),
    Case(
        "generic declarations",
        "function first<T extends { length: number }, U = T>(xs: T[], u?: U): T | undefined { return xs[0] }\nclass Box<T, K extends keyof T = keyof T> { constructor(public_: T) {} }\nfirst<string>(['ab']) + typeof Box",
        "abfunction",
    ),
    Case("generic arrow with comma", "const ident = <T,>(x: T) => x;\nident('a')", "a"),
    Case(
        "generic arrow with extends",
        "const wrap = <T extends unknown>(x: T): T[] => [x];\nconst aw = async <T,>(x: T): Promise<T> => x;\nwrap(2).length + typeof aw",
        "1function",
    ),
    Case(
        "generic methods",
        "const o = { m<T>(x: T): T { return x }, get p(): number { return 1 } };\nclass K { static s<T>(x: T) { return x } #p<T>(x: T): T { return x } q() { return this.#p<number>(2) } }\no.m<string>('a') + o.p + K.s(3) + new K().q()",
        "a132",
    ),
    Case(
        "instantiation expression",
        "function make<T>(x: T) { return [x] }\nconst makeNum = make<number>;\nconst alias = Array<string>;\nmakeNum(1).length + typeof alias",
        "1function",
    ),
    Case(
        "tagged template with type argument",
        "function tag<T>(s: TemplateStringsArray, ...v: T[]) { return s.raw.join('|') + v.length }\ntag<number>`a${1}b`",
        "a|b1",
    ),
    Case(
        "generic calls among operators",
        "function len<T>(xs: T[]): number { return xs.length }\nconst a = 1, b = 2;\nconst r = len<number>([1]) + a + b + 'x'.length;\nconst s = a * len<string | number>(['x', 2]) + 1;\n[r, s, len<A.B>([]) < 1].join()",
        "5,3,true",
    ),
    Case(
        "generic arrow without comma",
        "const id = <T>(x: T): T => x;\nconst pair = <K, V>(k: K, v: V): [K, V] => [k, v];\nid(3) + pair('a', 1).join()",
        "3a,1",
    ),
    Case(
        "tagged templates with type arguments",
        "function sql<T>(s: TemplateStringsArray, ...v: unknown[]): string { return s.raw.join('|') + v.length }\nconst a = sql<{ id: number }>`select ${1} from t`;\nconst b = sql<Row[]>`x`;\ntype Row = { id: number };\na + ',' + b",
        "select | from t1,x0",
    ),
    Case("optional call with type argument", "const o: { f?: <T>(x: T) => T } = { f: x => x };\no.f?.<number>(5)", 5),
    Case(
        "generic arrow spanning lines",
        "let f = async <\n    T\n>(v: T) => v;\nlet g = (a: string, b: string): Array<\n   string\n> => [a, b];\ntypeof f + g('x', 'y').join()",
        "functionx,y",
    ),
    Case(
        "return of a generic arrow on the next line",
        "function outer() {\n  return <T,>\n    (x: T) => x\n}\nouter()(7)",
        7,
    ),
    Case(
        "return type spanning lines",
        "const pair = (a: number, b: number): [\n  number,\n  number\n] => [a, b];\npair(1, 2).join('+')",
        "1+2",
    ),
    # --- expressions --------------------------------------------------------------------------
    Case(
        "as and satisfies",
        "const cfg = { port: 80 } satisfies { port: number };\nconst n = ('5' as unknown as string).length;\nconst k = [1, 2] as const;\ncfg.port + n + k.length",
        83,
    ),
    Case("as inside template literal", "const v: unknown = 4;\n`value: ${v as number} and ${(v as number) * 2}`", "value: 4 and 8"),
    Case(
        "non-null",
        "const m = new Map([['a', { b: [1] }]]);\nconst x = m.get('a')!.b![0]!;\nconst y = m.get('a')!!;\nlet z: number | undefined = 1;\nz! + x + y.b.length",
        3,
    ),
    Case(
        "non-null before optional chain and call",
        "const f: (() => number) | undefined = () => 1;\nconst o: { g?: { h: number } } = { g: { h: 2 } };\nf!() + o.g!.h + (o?.g)!.h",
        5,
    ),
    Case("as with parentheses around binary", "const x = (1 + 1 as number) / 2;\nconst y = (1 + 1) as number / 2;\nx + y", 2),
    # --- declarations that vanish ------------------------------------------------------------
    Case(
        "interfaces and type aliases spanning lines",
        "interface Point {\n  x: number\n  y: number\n  [extra: string]: unknown\n}\ntype Pair<T> =\n  | [T, T]\n  | { a: T; b: T }\ninterface P3 extends Point { z?: number }\nconst p: Point = { x: 1, y: 2 };\np.x + p.y",
        3,
    ),
    Case(
        "overloads",
        "function len(s: string): number;\nfunction len(a: unknown[]): number;\nfunction len(x: any) { return x.length }\nclass C {\n  m(a: string): string\n  m(a: number): number\n  m(a: any) { return a }\n  constructor();\n  constructor(x?: number) {}\n}\nlen('abc') + new C().m(1)",
        4,
    ),
    Case(
        "declare",
        "declare const injected: number;\ndeclare let later: string;\ndeclare function ext(x: number): void;\ndeclare class Native { m(): void }\ndeclare namespace NS { const v: number }\ndeclare module 'virtual' { export const q: number }\ndeclare global { interface Window { extra: 1 } }\ndeclare enum Ambient { A }\ntypeof injected",
        "undefined",
    ),
    Case(
        "type-only namespace",
        "namespace Shapes {\n  export type Circle = { r: number }\n  export interface Square { s: number }\n}\nnamespace Outer.Inner { export type T = 1 }\nconst c: Shapes.Circle = { r: 1 };\nc.r",
        1,
    ),
    # --- classes ------------------------------------------------------------------------------
    Case(
        "class members",
        "interface Named { name: string }\nclass Base { protected base = 1 }\nclass Person<T> extends Base implements Named, Iterable<T> {\n  public name: string = 'p';\n  private readonly items: T[] = [];\n  protected static count?: number;\n  declare tag: string;\n  age!: number;\n  override base = 2;\n  [key: string]: any;\n  public constructor() { super() }\n  public get size(): number { return this.items.length }\n  *[Symbol.iterator](): Iterator<T> { yield* this.items }\n  protected async load?(): Promise<void> {}\n}\nconst p = new Person<number>();\n[p.name, p.size, p.base, 'tag' in p, 'age' in p, Person.count].join()",
        "p,0,2,false,true,",
    ),
    Case(
        "abstract classes",
        "abstract class Shape {\n  abstract area(): number;\n  abstract readonly kind: string;\n  protected abstract get label(): string;\n  describe(): string { return this.kind + ':' + this.area() }\n}\nclass Sq extends Shape {\n  kind = 'sq';\n  constructor(private_: number = 2) { super() }\n  area() { return 4 }\n  get label() { return 'l' }\n}\nnew Sq().describe() + Object.keys(new Sq()).join()",
        "sq:4kind",
    ),
    Case(
        "class expression with generics",
        "const K = class<T> implements Object { v?: T; id = (x: T): T => x };\nconst k = new K<number>();\nk.id(3) + String(k.v)",
        "3undefined",
    ),
    Case("optional method with body", "class Q { m?(): number { return 1 } }\nnew Q().m!()", 1),
    Case("static blocks", "class S { static x: number; static { type Local = number; S.x = 3 as Local } }\nS.x", 3),
    Case(
        "computed members after modifiers",
        "const k = 'dyn';\nclass C {\n  field = 1\n  public [k] = 2\n  readonly ['b'] = 3\n  static override_ = 0\n  private ['m']() { return 4 }\n}\nconst c: any = new C();\nc.field + c.dyn + c.b + c.m()",
        10,
    ),
    # --- ASI hazards ----------------------------------------------------------------------------
    Case("type alias before parenthesis", "let calls = 0\nconst f = () => calls++\nf\ntype Erased = true\n(f)()\ncalls", 1),
    Case("interface before array literal", "let a = [1]\nlet r = a\ninterface I { x: 1 }\n[r] = [[2]]\nr[0]", 2),
    Case(
        "type alias before template",
        "const t = (s: TemplateStringsArray) => 'tagged'\nlet out: string = t\ntype X = 1\n`plain`\nout === t",
        True,
    ),
    Case("declare before parenthesis", "let n = 1\nlet q = n\ndeclare const z: number\n(q) ? 'no call' : 'zero'", "no call"),
    Case("as at end of statement before parenthesis", "let g = 0\nconst x = g as number\n(() => { g = 5 })()\nx + g", 5),
    Case("satisfies at end of statement before template", "const s = 'a' satisfies string\n`b`\ns", "a"),
    Case(
        "as at end of statement before bracket",
        "let arr = [1, 2]\nconst first = arr[0] as number\n[arr[0], arr[1]] = [arr[1], arr[0]]\nfirst + ':' + arr.join()",
        "1:2,1",
    ),
    Case(
        "as at end of class field before computed field",
        "class C {\n  x = 1 as number\n  ['y'] = 2\n}\nconst c: any = new C();\nc.x + c.y",
        3,
    ),
    Case(
        "as array type before bracket",
        "const arr = [[1, 2]]\nconst first = arr[0] as number[]\n[arr[0][0]] = [9]\narr[0][0] + first.length",
        11,
    ),
    Case("as type query before parenthesis", "const o = { a: 1 }\nlet k = 'a' as keyof typeof o\n(() => { k = 'b' as any })()\nk", "b"),
    Case("union type alias before template", "let v = 'start'\ntype U = 'a' | 'b'\n`end`", "end"),
    # tree-sitter reads the template as a template literal type and fails on the generic arrow in it
    Case(
        "conditional type alias before template with generic arrow",
        "type C<T> = T extends string ? 'y' : 'n'\n`v${<T,>(y: T) => y}`.length",
        12,
    ),
    Case(
        "conditional annotation before template with generic arrow",
        "let z: T extends U ? 'y' : /* no */ 'n'\n`v${<T,>(y: T) => y as number}`",
        "v(y   ) => y",
        tree_sitter_js=False,
    ),
    # V8 inserts `;` after `let t`; tree-sitter-javascript (and so rewrite.py) does not
    Case("annotation before template", "let t: string\n`value`", "value", tree_sitter_js=False),
    Case("overload before parenthesis", "function f(): number\nfunction f() { return 1 }\n(f)()", 1),
    Case(
        "inside switch and blocks",
        "let r = ''\nswitch (1) { case 1: r += 'a'\ntype T = 1\n(r) ; default: r += 'b' }\nif (r) { r += 'c'\ninterface I {}\n[r] }\nr",
        "abc",
    ),
    Case(
        "class member erased after field without semicolon",
        "class B {}\nclass C extends B {\n  declare x: number\n  y = 1\n  declare z: string\n}\nnew C().y",
        1,
    ),
    # --- unicode, strings, templates -----------------------------------------------------------
    Case(
        "unicode identifiers",
        "const café: number = 1;\nconst 𝒳: string = '𝒳';\nfunction ñ<Ŧ>(x: Ŧ): Ŧ { return x }\nñ<number>(café) + 𝒳 + 'é😀'.length",
        "1𝒳3",
    ),
    Case(
        "astral characters inside erased types",
        "let s: '😀' | 'é' = '😀';\ntype Emoji = `${'🙂'}${string}`;\ns.length",
        2,
        same_as_reference=False,
        reason="ts-blank-space blanks UTF-16 code units (two spaces for 😀); we keep one per code point",
    ),
    Case(
        "strings that look like types",
        "const s: string = 'let x: number = 1 as any';\nconst re = /a<b>c/g;\n`${s}|${re.source}|<T>(x: T) => x`",
        "let x: number = 1 as any|a<b>c|<T>(x: T) => x",
    ),
    # --- JavaScript that TypeScript reads differently ---------------------------------------------
    Case("less-than greater-than comparison stays", "const a = 1, b = 2, c = 0;\na < b > c", True),
    Case("f < T > (x) is a call with a type argument", "const f = (x: number) => x * 10, T = 0;\nf < T > (4)", 40),
    Case("a < b > then line break is an instantiation", "let a = 5, b = 1, c = 2\nlet r = a < b >\nc\nr", 5),
    Case("abstract then line break is an identifier", "var abstract = 'id'\nabstract\nclass A {}\ntypeof A", "function"),
    # --- modules (not run: cells are scripts) -----------------------------------------------------
    Case(
        "type-only imports",
        'import type { A } from "a";\nimport type B from "b";\nimport { type C, d, type E } from "c";\nimport { type F } from "f";\nimport g, { type H, } from "g";',
    ),
    Case(
        "type-only exports",
        'export type { A } from "a";\nexport { type B, c };\nexport type D = 1;\nexport interface E {}\nexport declare const f: number;\nexport function g(): void;\nexport function g() {}\nexport abstract class H {}\nexport default interface I {}\nexport namespace N { export type T = 1 }',
    ),
    Case("semicolon before erased import", 'x\nimport type { A } from "a"\n(y)'),
]

# Plain JavaScript (mostly cells from the rewrite and runtime tests): must come back unchanged.
PLAIN_JS: list[str] = [
    "const a = 1, {b, c: [d]} = o;",
    "let x",
    "class K {}",
    "function f() {}",
    "var v",
    "const a = 1\n\n// note\na +\n  2 // tail",
    "while (x) y()\nfor (;;) {}\nconst f = async () => { await g() }\nconst h = x => x",
    "function s() { 'use strict'; return this }",
    "const é = 'ü'; const 𝒳 = 1\nthrow new Error(é)",
    "1 + 1;",
    "{a: 1}",
    "'x' // trailing comment",
    "let q = 2\nq * 21",
    "const v = await Promise.resolve(7); return v + 1",
    "if (true) { return 'early' }\n'late'",
    "const x = 1; let y = 2; var z = 3; function f() { return x + y + z } class C { m() { return 'm' } }",
    "const {a, b: [c], d = 4} = {a: 1, b: [2]}",
    "for (let i = 0; i < 2; i++) { const inner = i }\n{ let blockLocal = 1 }",
    "const r = g(); function g() { return 'hoisted' }\nr",
    "console.log('a %s b %d', 'x', 42, {k: [1]}); console.error('bad')",
    "globalThis.seen = []; setTimeout(() => seen.push('t0')); const h = setTimeout(() => 1, 5); clearTimeout(h)",
    "let order = []; queueMicrotask(() => order.push('micro')); await null; order",
    "function boom(o) {\n  return o.x.y\n}",
    "throw 'plain string'",
    "10n ** 30n",
    "({ [Symbol.for('Jupyter.display')]() { return {'text/html': '<b>hi</b>'} } })",
    "const re = /a<b>(c)/g; re.test('a<b>c') ? 'y' : 'n'",
    "const a = 1, b = 2, c = 3; a < b > c",
    "const ok = a < b && b > c; const shifted = x >> 1 >>> 2 << 3",
    "function* gen() { yield 1; yield* [2, 3] }\n[...gen()]",
    "async function* ag() { for await (const x of [1]) yield x }",
    "const { p = 1, ...rest } = obj; const [h, , ...t] = arr",
    "class A extends B { #priv = 1; static s = 2; static { this.t = 3 } get g() { return this.#priv } set g(v) {} async *m() {} }",
    "label: for (const k in o) { if (k) continue label; else break label }",
    "const t = tag`a${1}b`; const u = `x${`y${z}`}`",
    "a ? (b) : c => d",
    "a = b ? (c) : d;",
    "x?.y?.[z]?.(w) ?? v",
    "const o = { type: 1, interface: 2, declare: 3, abstract: 4, as: 5, satisfies: 6, readonly: 7, namespace: 8, module: 9, enum: 10 }",
    "var type = 1, declare = 2, readonly = 3, as = 4, satisfies = 5, namespace = 6, module = 7, abstract = 8; type + declare",
    "type = 1; declare(x); module.exports = abstract; namespace = interface + implements",
    "declare\nconst z = 1",
    "let async = 1; async = async + 1; const fn = async (x) => x",
    "x\n!y",
    "new Foo; new Foo.Bar(); new (get())()",
    "do x++; while (x < 10)",
    "switch (k) { case 1: a(); break; default: b() }",
    "try { t() } catch { c() } finally { f() }",
    "const big = 0x10_00n, fl = .5e-3, oct = 0o17",
    "if (a) b; else if (c) d; else { e }",
    "const r = a < b && c > (d), s = a < b || c > (d)",
    "class C { declare = 1; abstract = 2; readonly = 3; public = 4; static = 5; override = 6; accessor = 7; type = 8; as = 9 }",
    "class D { declare\n x = 1; public\n y = 2 }",
    "for (let i = 0; i < n; i++) { if (i > 2) break }",
    "#!/usr/bin/env node\nconsole.log(1)",
    "{ using res = null; res }",
]


# --- random programs from small TypeScript pieces ----------------------------------------------

NAMES = ["x", "é", "𝒳", "value", "ñame"]
TYPES = [
    "number",
    "string[]",
    "Map<string, 𝒳>",
    "{ a: number; b?: '😀' }",
    "A | B",
    "(x: number) => void",
    "{\n  k: 1\n}",
    "[a: 1, b?: 2]",
    "`t${string}`",
    "Array<\n  string\n>",
    "keyof typeof x",
    "T extends U ? 'y' : /* no */ 'n'",
]
EXPRS = [
    "1",
    "'é😀'",
    "x",
    "(x)",
    "[1, 2]",
    "`t${1}`",
    "a + b",
    "f(x)",
    "{ a: 1 }",
    "() => 0",
    "f<T>(x) + a + b",
    "x!",
    "a < b",
    "y as any",
    "<T,>(y: T) => y",
]
SEPARATORS = ["\n", ";\n", "; ", "\r\n", "\n\n"]


def statement_forms(n: str, t: str, e: str, t2: str) -> list[str]:
    """TypeScript statements; those that start with `(`, `[` or a template are valid after any
    other (they continue it, as in JavaScript)."""
    return [
        f"let {n}: {t} = {e}",
        f"const {n} = {e} as {t}",
        f"const {n} = {e} satisfies {t}",
        f"type {n}<T = {t}> = {t2}",
        f"interface {n} {{ f: {t}; m?(): {t2} }}",
        f"function {n}<T extends {t}>(a: {t}, b?: T, ...c: {t2}[]): {t} {{ return {e} }}",
        f"function {n}(this: {t}, a: {t2}): void {{}}",
        f"class {n}<T> extends Base<{t}> implements I {{ private f?: {t} = {e}; declare g: {t2}; m<U>(x: U): U {{ return x }} }}",
        f"abstract class {n} {{ abstract m(): {t}; protected readonly r!: {t2} }}",
        f"declare const {n}: {t}",
        f"f({e})!.x!",
        f"f<{t}>({e})",
        f"new Set<{t}>()",
        f"const {n} = <T,>(x: T): {t} => x",
        f"const {n} = async <T extends {t}>(x: T) => x",
        f"function {n}(x: {t}): {t}\nfunction {n}(x: any) {{ return x }}",
        f"({e})",
        f"[{e}]",
        f"`s${{{e} as {t}}}`",
        f"if ({e}) {{ type L = {t}; {e} }}",
        f"class {n} {{\n  a = {e} as {t}\n  public ['k'] = 1\n  declare d: {t2}\n  ['m']() {{}}\n  [k: string]: {t}\n}}",
        f"const {n} = <\n  T,\n>(x: T): {t} => x",
        f"const {n} = (a: {t}, b?: {t2}): {t} => a",
        f"namespace {n} {{ export type Q = {t} }}",
        f"let {n} = {e} as {t}\n(x)",
    ]


@st.composite
def programs(draw: st.DrawFn) -> str:
    out = []
    for _ in range(draw(st.integers(1, 8))):
        forms = statement_forms(*(draw(st.sampled_from(pool)) for pool in (NAMES, TYPES, EXPRS, TYPES)))
        out.append(draw(st.sampled_from(forms)) + draw(st.sampled_from(SEPARATORS)))
    return "".join(out)


def random_programs(count: int, seed: int = 7) -> list[str]:
    """Programs from the same pieces without astral characters (ts-blank-space blanks UTF-16)."""
    rng = random.Random(seed)
    bmp = [[x for x in pool if all(ord(c) < 0x10000 for c in x)] for pool in (NAMES, TYPES, EXPRS, TYPES)]
    return [
        "".join(rng.choice(statement_forms(*map(rng.choice, bmp))) + rng.choice(SEPARATORS) for _ in range(rng.randint(1, 8)))
        for _ in range(count)
    ]
