// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Evaluates ValidatingAdmissionPolicies the way the API server does, for the
// parts qoslet's policies use: the binding's match, matchConditions, lazy
// variables, validations with message or messageExpression, failurePolicy
// Fail, and params selected by a binding (one evaluation per param, all must
// pass; none found with parameterNotFoundAction Deny refuses). The CEL itself
// is @bufbuild/cel's, with the strings extension (join, split) as the API
// server's CEL environment has it. Every expression a policy holds is
// recorded with the results it gave, so a test can demand that each was
// evaluated, and each validation seen both passing and failing.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isCelError, parse, plan, celEnv } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { parseAllDocuments } from "yaml";

// The repository's root: tests/js/admission/ is three levels down.
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

// The objects of a kustomization's resources (plain files only: ours have nothing else).
export function loadOverlay(dir) {
	const kust = parseAllDocuments(readFileSync(path.join(dir, "kustomization.yaml"), "utf8"))[0].toJS();
	const objs = [];
	for (const file of kust.resources) {
		for (const doc of parseAllDocuments(readFileSync(path.join(dir, file), "utf8"))) {
			if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0].message}`);
			const o = doc.toJS();
			if (o) objs.push(o);
		}
	}
	return objs;
}

// JSON as CEL sees a Kubernetes object: maps, lists, int64 for whole numbers.
export function toCel(v) {
	if (Array.isArray(v)) return v.map(toCel);
	if (v === null || v === undefined) return null;
	if (typeof v === "object") {
		const m = new Map();
		for (const [k, x] of Object.entries(v)) m.set(k, toCel(x));
		return m;
	}
	if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
	return v;
}

const env = celEnv({ funcs: strings });
const compiled = new Map();

// Every expression of every policy run: expression -> Set of results ("true", "false", "error", "value").
export const seen = new Map();

function record(expr, result) {
	if (!seen.has(expr)) seen.set(expr, new Set());
	seen.get(expr).add(result);
}

function evaluate(expr, bindings) {
	let fn = compiled.get(expr);
	if (!fn) {
		fn = plan(env, parse(expr));
		compiled.set(expr, fn);
	}
	const r = fn(bindings);
	if (isCelError(r)) {
		record(expr, "error");
		return { error: r.message };
	}
	record(expr, typeof r === "boolean" ? String(r) : "value");
	return { value: r };
}

// A lazy `variables` map: each variable evaluated on first use, as the API server does.
class Variables extends Map {
	constructor(decls, bindings) {
		super();
		this.decls = new Map((decls ?? []).map((d) => [d.name, d.expression]));
		this.bindings = { ...bindings, variables: this };
		this.cache = new Map();
	}
	has(k) {
		return this.decls.has(k);
	}
	get(k) {
		if (!this.decls.has(k)) return undefined;
		if (!this.cache.has(k)) this.cache.set(k, evaluate(this.decls.get(k), this.bindings));
		const r = this.cache.get(k);
		if (r.error) throw new Error(`variables.${k}: ${r.error}`);
		return r.value;
	}
}

function ruleMatches(rule, req) {
	const resource = req.subResource ? `${req.resource.resource}/${req.subResource}` : req.resource.resource;
	const any = (list, v) => list.includes("*") || list.includes(v);
	return (
		any(rule.apiGroups, req.resource.group) &&
		any(rule.apiVersions, req.resource.version) &&
		any(rule.operations, req.operation) &&
		any(rule.resources, resource)
	);
}

// One request: {operation, resource: {group, version, resource}, subResource,
// namespace, name, userInfo, object, oldObject}; params: the objects the
// binding would select (for a policy with paramKind).
// Returns {allowed, skipped, messages: [], errors: []}.
export function admit(policy, binding, req, params = []) {
	const spec = policy.spec;
	const out = { allowed: true, skipped: false, messages: [], errors: [] };
	if (!spec.matchConstraints.resourceRules.some((r) => ruleMatches(r, req))) {
		out.skipped = true;
		return out;
	}
	const request = toCel({
		operation: req.operation,
		namespace: req.namespace ?? "",
		name: req.name ?? "",
		resource: req.resource,
		subResource: req.subResource ?? "",
		userInfo: req.userInfo,
	});
	const base = {
		object: toCel(req.object ?? null),
		oldObject: toCel(req.oldObject ?? null),
		request,
	};
	const fail = (message) => {
		out.allowed = false;
		out.messages.push(message);
	};
	// matchConditions come before params: a request they exclude is never judged
	for (const mc of spec.matchConditions ?? []) {
		const r = evaluate(mc.expression, { ...base, params: null });
		if (r.error) {
			out.errors.push(`matchCondition ${mc.name}: ${r.error}`);
			fail(r.error);
			return out;
		}
		if (r.value !== true) {
			out.skipped = true;
			return out;
		}
	}
	let paramSets = [null];
	if (spec.paramKind) {
		if (!params.length) {
			if (binding.spec.paramRef.parameterNotFoundAction === "Deny") fail("no params found");
			return out;
		}
		paramSets = params.map(toCel);
	}
	for (const p of paramSets) {
		const vars = new Variables(spec.variables, { ...base, params: p });
		const bindings = vars.bindings;
		for (const v of spec.validations) {
			const r = evaluate(v.expression, bindings);
			if (r.error) {
				// failurePolicy Fail: an expression that cannot be judged refuses
				out.errors.push(r.error);
				fail(r.error);
				continue;
			}
			if (r.value === true) continue;
			let message = v.message ?? `failed expression: ${v.expression}`;
			if (v.messageExpression) {
				const m = evaluate(v.messageExpression, bindings);
				if (m.error) out.errors.push(`messageExpression: ${m.error}`);
				else message = m.value;
			}
			fail(message);
		}
	}
	return out;
}

// The expressions a policy holds, by where they are.
export function expressions(policy) {
	const s = policy.spec;
	return [
		...(s.matchConditions ?? []).map((m) => ({ where: `matchConditions ${m.name}`, expr: m.expression, bool: true })),
		...(s.variables ?? []).map((v) => ({ where: `variables.${v.name}`, expr: v.expression })),
		...s.validations.flatMap((v, i) => [
			{ where: `validations[${i}]`, expr: v.expression, bool: true, validation: true },
			...(v.messageExpression ? [{ where: `validations[${i}].messageExpression`, expr: v.messageExpression }] : []),
		]),
	];
}
