// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The manifests against the Kubernetes API schemas (schema.mjs), offline.
// With QOSLET_RENDERED set (a directory of `kubectl kustomize` outputs, one
// NAME.yaml per kustomization: tests/integration/test_deploy_admission.sh),
// every object rendered; the admission overlays must render exactly the
// objects the policy tests evaluated. Without it, every manifest file in
// scripts/deploy and scripts/deploy-overlays as written.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parseAllDocuments } from "yaml";
import { ROOT, loadOverlay } from "./policy.mjs";
import { validateSchema } from "./schema.mjs";

// Kinds of CRDs the API server has only with their operator (the Prometheus Operator's).
const CRD_GROUPS = ["monitoring.coreos.com/"];

function docsOf(file) {
	return parseAllDocuments(readFileSync(file, "utf8"))
		.map((d) => d.toJS())
		.filter((o) => o && o.kind !== "Kustomization" && !CRD_GROUPS.some((g) => o.apiVersion.startsWith(g)));
}

function manifests() {
	const rendered = process.env.QOSLET_RENDERED;
	const files = rendered
		? readdirSync(rendered).filter((f) => f.endsWith(".yaml")).map((f) => path.join(rendered, f))
		: [path.join(ROOT, "scripts", "deploy"), ...readdirSync(path.join(ROOT, "scripts", "deploy-overlays")).map((d) => path.join(ROOT, "scripts", "deploy-overlays", d))]
				.flatMap((d) => readdirSync(d).filter((f) => f.endsWith(".yaml")).map((f) => path.join(d, f)));
	return files.map((f) => ({ file: path.relative(ROOT, f), objs: docsOf(f) }));
}

test("every manifest validates against the API schemas", async () => {
	const all = manifests();
	assert.ok(all.length > 0);
	let n = 0;
	for (const { file, objs } of all)
		for (const o of objs) {
			await assert.doesNotReject(validateSchema(o), `${file}: ${o.kind} ${o.metadata?.name}`);
			n++;
		}
	console.log(`# ${n} objects in ${all.length} files validated${process.env.QOSLET_RENDERED ? " (rendered)" : ""}`);
});

test("the admission overlays render exactly what the policy tests evaluate", { skip: !process.env.QOSLET_RENDERED && "no rendered manifests (kubectl missing)" }, () => {
	for (const ov of ["admission", "admission-own-node-pods"]) {
		const rendered = docsOf(path.join(process.env.QOSLET_RENDERED, `${ov}.yaml`));
		const key = (o) => `${o.kind}/${o.metadata.name}`;
		const sort = (l) => [...l].sort((a, b) => key(a).localeCompare(key(b)));
		assert.deepEqual(sort(rendered), sort(loadOverlay(path.join(ROOT, "scripts", "deploy-overlays", ov))), ov);
	}
});

// The validator itself refuses what the API server would.
test("the schema check refuses unknown fields, bad values and missing fields", async () => {
	const good = loadOverlay(path.join(ROOT, "scripts", "deploy-overlays", "admission")).find((o) => o.kind === "ValidatingAdmissionPolicy");
	await validateSchema(good);
	const broken = [
		["a misspelt field", (p) => ((p.spec.validatons = p.spec.validations), delete p.spec.validations)],
		["a misspelt nested field", (p) => (p.spec.validations[0].expresion = "true")],
		["a misspelt metadata field", (p) => (p.metadata.label = {})],
		["an unknown failurePolicy", (p) => (p.spec.failurePolicy = "Maybe")],
		["a validation without expression", (p) => delete p.spec.validations[0].expression],
		["a number for a string", (p) => (p.spec.variables[0].name = 7)],
	];
	for (const [what, breakIt] of broken) {
		const p = structuredClone(good);
		breakIt(p);
		await assert.rejects(validateSchema(p), what);
	}
});
