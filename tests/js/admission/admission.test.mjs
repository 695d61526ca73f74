// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The CEL of the shipped admission policies (scripts/deploy-overlays/admission
// and admission-own-node-pods, read from the YAML as shipped) on sample
// admission requests, allowed and denied: a tenant cannot give a pod or a
// template the QoS label or qoslet annotations, nobody changes them on a
// pod (nor through its status or a Binding), the listed identities can set
// them; only the DaemonSet controller gives a pod a DaemonSet owner; the
// agent's token acts only on its own node's status (not its metadata) and
// Events, and evicts only pods on its node. The
// last test demands that every expression was evaluated, and every
// validation seen both passing and failing.
import assert from "node:assert/strict";
import path from "node:path";
import { after, describe, test } from "node:test";
import { ROOT, admit, expressions, loadOverlay, seen } from "./policy.mjs";

const overlays = path.join(ROOT, "scripts", "deploy-overlays");
const objects = [...loadOverlay(path.join(overlays, "admission")), ...loadOverlay(path.join(overlays, "admission-own-node-pods"))];
const policies = objects.filter((o) => o.kind === "ValidatingAdmissionPolicy");

function pair(name) {
	const policy = policies.find((p) => p.metadata.name === name);
	const binding = objects.find((o) => o.kind === "ValidatingAdmissionPolicyBinding" && o.spec.policyName === name);
	assert.ok(policy && binding, `policy and binding ${name}`);
	return (req, params) => admit(policy, binding, req, params);
}

const TENANT = { username: "alice", groups: ["team-a", "system:authenticated"] };
const ADMIN = { username: "root-admin", groups: ["system:masters", "system:authenticated"] };
const QOS_ADMIN = { username: "bob", groups: ["qoslet:qos-admins"] };
const RS_CONTROLLER = { username: "system:serviceaccount:kube-system:replicaset-controller", groups: ["system:serviceaccounts"] };
const KUBELET = { username: "system:node:n1", groups: ["system:nodes", "system:authenticated"] };
const AGENT_SA = "system:serviceaccount:qoslet-system:qoslet";
const agent = (node) => ({
	username: AGENT_SA,
	groups: ["system:serviceaccounts", "system:serviceaccounts:qoslet-system"],
	extra: node ? { "authentication.kubernetes.io/node-name": [node], "authentication.kubernetes.io/pod-name": ["qoslet-x"] } : {},
});

const pod = (labels = {}, annotations = {}, extra = {}) => ({
	apiVersion: "v1",
	kind: "Pod",
	metadata: { name: "p", namespace: "team-a", labels, annotations },
	spec: { containers: [{ name: "c", image: "busybox" }], nodeName: "n1", ...extra },
});
const podReq = (userInfo, object, oldObject) => ({
	operation: oldObject ? "UPDATE" : "CREATE",
	resource: { group: "", version: "v1", resource: "pods" },
	namespace: "team-a",
	name: "p",
	userInfo,
	object,
	oldObject,
});
const workload = (group, kind, resource, template, extra = {}) => ({
	req: (userInfo, oldObject) => ({
		operation: oldObject ? "UPDATE" : "CREATE",
		resource: { group, version: "v1", resource },
		namespace: "team-a",
		userInfo,
		object: { apiVersion: `${group}/v1`, kind, metadata: { name: "w", namespace: "team-a" }, spec: { ...extra, ...template } },
		oldObject,
	}),
});
const deployment = (meta, replicas = 1) =>
	workload("apps", "Deployment", "deployments", { template: { metadata: meta, spec: { containers: [] } } }, { replicas });

describe("qoslet-pod-qos-metadata", () => {
	const run = pair("qoslet-pod-qos-metadata");
	const denied = (r, why) => {
		assert.equal(r.allowed, false, why);
		assert.deepEqual(r.errors, [], "no CEL error");
	};
	const allowed = (r, why) => {
		assert.equal(r.allowed, true, `${why}: ${r.messages.join("; ")}`);
		assert.equal(r.skipped, false, "the policy judged it");
	};

	test("a tenant's pod without the keys passes", () => {
		allowed(run(podReq(TENANT, pod({ app: "web" }, { "example.com/x": "1" }))), "plain pod");
	});
	test("a tenant's BestEffort pod labelled LSE or SYSTEM is refused", () => {
		for (const cls of ["LSE", "SYSTEM"]) {
			const r = run(podReq(TENANT, pod({ "koordinator.sh/qosClass": cls })));
			denied(r, cls);
			assert.match(r.messages[0], new RegExp(`alice may not set.*label koordinator.sh/qosClass=${cls}`));
		}
	});
	test("a tenant's opt-out, eviction priority, target and Koordinator's eviction cost are refused", () => {
		for (const a of [
			{ "qoslet.io/eviction-disabled": "true" },
			{ "qoslet.io/eviction-priority": "100" },
			{ "qoslet.io/runq-p99-target-us": "1" },
			{ "scheduling.koordinator.sh/eviction-cost": "2147483647" },
			{ "koordinator.sh/eviction-priority": "9" },
		])
			denied(run(podReq(TENANT, pod({}, a))), JSON.stringify(a));
	});
	test("cluster admins, QoS admins, the pod controllers and the kubelet may set them", () => {
		const p = pod({ "koordinator.sh/qosClass": "LSE" }, { "qoslet.io/eviction-disabled": "true" });
		for (const who of [ADMIN, QOS_ADMIN, RS_CONTROLLER, KUBELET]) allowed(run(podReq(who, p)), who.username);
	});
	test("on a pod they never change, not even by an admin", () => {
		const before = pod({ "koordinator.sh/qosClass": "LS" });
		const r = run(podReq(ADMIN, pod({ "koordinator.sh/qosClass": "LSE" }), before));
		denied(r, "admin changes the label");
		assert.match(r.messages.join(), /cannot change after creation/);
		denied(run(podReq(TENANT, pod({ "koordinator.sh/qosClass": "LSE" }), pod())), "tenant adds the label");
		denied(run(podReq(TENANT, pod(), before)), "tenant removes the label");
		denied(run(podReq(ADMIN, pod({}, { "qoslet.io/eviction-disabled": "true" }), pod())), "admin adds an opt-out");
	});
	test("other changes to a pod that carries them pass, for anyone", () => {
		const before = pod({ "koordinator.sh/qosClass": "BE" }, { "qoslet.io/eviction-priority": "1" });
		const after = pod({ "koordinator.sh/qosClass": "BE", app: "x" }, { "qoslet.io/eviction-priority": "1", other: "y" });
		allowed(run(podReq(TENANT, after, before)), "unrelated label added");
	});
	test("workload templates: the same rule for whoever writes them", () => {
		const labelled = { labels: { app: "w", "koordinator.sh/qosClass": "LSR" } };
		denied(run(deployment(labelled).req(TENANT)), "tenant's Deployment with the label");
		allowed(run(deployment({ labels: { app: "w" } }).req(TENANT)), "tenant's plain Deployment");
		allowed(run(deployment(labelled).req(QOS_ADMIN)), "QoS admin's Deployment");
		// a tenant scales an admin's Deployment: the template's keys are unchanged
		allowed(run(deployment(labelled, 5).req(TENANT, deployment(labelled, 1).req(ADMIN).object)), "scale");
		denied(
			run(deployment({ labels: { app: "w", "koordinator.sh/qosClass": "LSE" } }).req(TENANT, deployment(labelled).req(ADMIN).object)),
			"tenant changes the template's class",
		);
		allowed(
			run(deployment({ labels: { app: "w" } }).req(ADMIN, deployment(labelled).req(ADMIN).object)),
			"admin removes it from a template (not a pod)",
		);
		const job = workload("batch", "Job", "jobs", { template: { spec: { containers: [] } } });
		allowed(run(job.req(TENANT)), "a Job whose template has no metadata");
		const cron = (meta) =>
			workload("batch", "CronJob", "cronjobs", { schedule: "* * * * *", jobTemplate: { spec: { template: { metadata: meta, spec: {} } } } });
		denied(run(cron({ annotations: { "qoslet.io/eviction-disabled": "true" } }).req(TENANT)), "tenant's CronJob opt-out");
		allowed(run(cron({ annotations: { "example.com/a": "b" } }).req(TENANT)), "tenant's plain CronJob");
		const sts = workload("apps", "StatefulSet", "statefulsets", { template: { metadata: { annotations: { "qoslet.io/runq-p99-target-us": "1" } } } });
		denied(run(sts.req(TENANT)), "tenant's StatefulSet with a 1 us target");
	});
	// Status writes of built-in kinds keep metadata changes (kubernetes/kubernetes#92022):
	// whoever may write pods/status could otherwise set the keys after creation.
	test("pods/status: the keys cannot be set or changed through it, by anyone", () => {
		const status = (userInfo, object, oldObject) => ({ ...podReq(userInfo, object, oldObject), subResource: "status" });
		denied(run(status(TENANT, pod({ "koordinator.sh/qosClass": "LSE" }), pod())), "tenant's status write adds the label");
		denied(run(status(KUBELET, pod({}, { "qoslet.io/eviction-disabled": "true" }), pod())), "a kubelet's status write adds an opt-out");
		allowed(run(status(KUBELET, { ...pod({ "koordinator.sh/qosClass": "BE" }), status: { phase: "Running" } }, pod({ "koordinator.sh/qosClass": "BE" }))), "a plain status write");
	});
	// A Binding's annotations are copied onto the pod it binds (the pods/binding subresource).
	test("pods/binding: a Binding may not carry the annotations, not even an admin's", () => {
		const SCHEDULER = { username: "system:kube-scheduler", groups: ["system:authenticated"] };
		const binding = (userInfo, annotations) => ({
			operation: "CREATE",
			resource: { group: "", version: "v1", resource: "pods" },
			subResource: "binding",
			namespace: "team-a",
			name: "p",
			userInfo,
			object: { apiVersion: "v1", kind: "Binding", metadata: { name: "p", namespace: "team-a", annotations }, target: { kind: "Node", name: "n1" } },
		});
		allowed(run(binding(SCHEDULER, {})), "the scheduler binds");
		denied(run(binding(SCHEDULER, { "qoslet.io/eviction-disabled": "true" })), "a binder adds an opt-out");
		denied(run(binding(ADMIN, { "qoslet.io/runq-p99-target-us": "1" })), "an admin's binding adds a target");
		// the older spelling, POST .../namespaces/NS/bindings, binds (and copies annotations) the same way
		const legacy = (userInfo, annotations) => ({ ...binding(userInfo, annotations), resource: { group: "", version: "v1", resource: "bindings" }, subResource: "" });
		allowed(run(legacy(SCHEDULER, {})), "the scheduler binds through bindings");
		denied(run(legacy(SCHEDULER, { "koordinator.sh/eviction-priority": "9" })), "a binder adds a priority through bindings");
	});
	// The controller manager is trusted to copy checked templates: every kind whose
	// template it copies must be checked, ReplicationControllers too.
	test("ReplicationControllers: their templates are checked like the others", () => {
		const rc = (meta) => workload("", "ReplicationController", "replicationcontrollers", { template: { metadata: meta, spec: { containers: [] } } }, { replicas: 1 });
		denied(run(rc({ labels: { app: "w", "koordinator.sh/qosClass": "LSE" } }).req(TENANT)), "tenant's RC with the label");
		allowed(run(rc({ labels: { app: "w" } }).req(TENANT)), "tenant's plain RC");
	});
	test("other resources are not its business", () => {
		const r = run({ ...podReq(TENANT, pod({ "koordinator.sh/qosClass": "LSE" })), resource: { group: "", version: "v1", resource: "configmaps" } });
		assert.equal(r.skipped, true);
	});
});

// A pod owned by a DaemonSet (controller reference apps/v1 DaemonSet, in the
// namespaces of the agent's trust.daemonset_namespaces) is SYSTEM to the agent:
// never throttled or evicted. Only the DaemonSet controller gives a pod that
// reference; anyone else who writes one forges it.
describe("qoslet-pod-daemonset-owner", () => {
	const run = pair("qoslet-pod-daemonset-owner");
	const DS_CONTROLLER = { username: "system:serviceaccount:kube-system:daemon-set-controller", groups: ["system:serviceaccounts"] };
	const KCM = { username: "system:kube-controller-manager", groups: ["system:authenticated"] };
	const GC = { username: "system:serviceaccount:kube-system:generic-garbage-collector", groups: ["system:serviceaccounts"] };
	const ref = (kind, over = {}) => ({ apiVersion: "apps/v1", kind, name: "agent", uid: "0f0e", controller: true, blockOwnerDeletion: true, ...over });
	const owned = (refs, labels = {}) => ({ ...pod(labels), metadata: { ...pod(labels).metadata, ownerReferences: refs } });
	const ok = (r, why) => {
		assert.equal(r.allowed, true, `${why}: ${r.messages.join("; ")}`);
		assert.equal(r.skipped, false, "the policy judged it");
	};
	const no = (r, why) => {
		assert.equal(r.allowed, false, why);
		assert.deepEqual(r.errors, [], `${why}: no CEL error`);
		assert.match(r.messages.join(), /only the DaemonSet controller/);
	};

	test("a tenant cannot give a pod a DaemonSet owner, of any apiVersion", () => {
		no(run(podReq(TENANT, owned([ref("DaemonSet")]))), "a bare pod that names a DaemonSet as controller");
		no(run(podReq(TENANT, owned([ref("DaemonSet", { apiVersion: "extensions/v1beta1", controller: false })]))), "an old apiVersion, not controller");
		no(run(podReq(TENANT, owned([ref("DaemonSet")]), pod())), "added to an existing pod");
		no(run(podReq(TENANT, owned([ref("DaemonSet")]), owned([ref("DaemonSet", { controller: false })]))), "an existing reference made the controller");
		no(run({ ...podReq(TENANT, owned([ref("DaemonSet")]), pod()), subResource: "status" }), "through the status");
	});
	test("the DaemonSet controller, the controller manager and cluster admins may", () => {
		for (const who of [DS_CONTROLLER, KCM, ADMIN]) ok(run(podReq(who, owned([ref("DaemonSet")]))), who.username);
		ok(run(podReq(DS_CONTROLLER, owned([ref("DaemonSet")]), pod())), "adoption of an orphan");
	});
	test("other owners, removals and other changes pass, for anyone", () => {
		ok(run(podReq(TENANT, owned([ref("ReplicaSet")]))), "a ReplicaSet owner");
		ok(run(podReq(GC, pod(), owned([ref("DaemonSet")]))), "the garbage collector orphans the pod");
		ok(run(podReq(GC, owned([ref("DaemonSet", { blockOwnerDeletion: false })]), owned([ref("DaemonSet")]))), "the garbage collector unblocks the owner");
		ok(run(podReq(TENANT, owned([ref("DaemonSet")], { app: "x" }), owned([ref("DaemonSet")]))), "a label on a DaemonSet's pod");
	});
	test("other resources are not its business", () => {
		assert.equal(run({ ...podReq(TENANT, owned([ref("DaemonSet")])), resource: { group: "", version: "v1", resource: "configmaps" } }).skipped, true);
	});
});

describe("qoslet-agent-own-node", () => {
	const run = pair("qoslet-agent-own-node");
	const nodeMeta = { labels: { "kubernetes.io/hostname": "n1" }, annotations: { "node.alpha.kubernetes.io/ttl": "0" } };
	const node = (name, status, meta = nodeMeta) => ({ apiVersion: "v1", kind: "Node", metadata: { name, ...meta }, spec: { podCIDR: "10.1.0.0/24" }, status });
	const ready = { type: "Ready", status: "True", reason: "KubeletReady" };
	const qos = (s) => ({ type: "QoSletInterference", status: s, reason: s === "True" ? "Interference" : "NoInterference" });
	const status = (over = {}) => ({
		conditions: [ready, qos("False")],
		capacity: { cpu: "8", memory: "32Gi", "kubernetes.io/batch-cpu": "1000" },
		allocatable: { cpu: "7800m", memory: "30Gi", "kubernetes.io/batch-cpu": "1000" },
		addresses: [{ type: "InternalIP", address: "10.0.0.1" }],
		daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
		nodeInfo: { kubeletVersion: "v1.31.0" },
		...over,
	});
	const patch = (userInfo, name, before, afterStatus, afterMeta) => ({
		operation: "UPDATE",
		resource: { group: "", version: "v1", resource: "nodes" },
		subResource: "status",
		name,
		userInfo,
		object: node(name, afterStatus, afterMeta),
		oldObject: node(name, before),
	});
	const ok = (r, why) => assert.equal(r.allowed, true, `${why}: ${r.messages.join("; ")} ${r.errors.join("; ")}`);
	const no = (r, why, re) => {
		assert.equal(r.allowed, false, why);
		assert.deepEqual(r.errors, [], `${why}: no CEL error`);
		if (re) assert.match(r.messages.join(" | "), re);
	};

	test("its own node's condition and batch resources", () => {
		ok(run(patch(agent("n1"), "n1", status(), status({ conditions: [ready, qos("True")] }))), "condition");
		const batch = status({
			capacity: { cpu: "8", memory: "32Gi", "kubernetes.io/batch-cpu": "2500", "kubernetes.io/batch-memory": "1073741824" },
			allocatable: { cpu: "7800m", memory: "30Gi", "kubernetes.io/batch-cpu": "2500", "kubernetes.io/batch-memory": "1073741824" },
		});
		ok(run(patch(agent("n1"), "n1", status(), batch)), "batch resources");
		ok(run(patch(agent("n1"), "n1", { conditions: [ready] }, { conditions: [ready, qos("True")] })), "a node with few fields");
	});
	test("another node, or a token without a node", () => {
		no(run(patch(agent("n1"), "n2", status(), status({ conditions: [ready, qos("True")] }))), "other node", /agent of node n1 may not change the status of node n2/);
		no(run(patch(agent(null), "n1", status(), status({ conditions: [ready, qos("True")] }))), "no node name", /names no node/);
	});
	test("on its own node, nothing but its condition and batch resources", () => {
		const cases = {
			"another condition": status({ conditions: [{ ...ready, status: "False" }, qos("False")] }),
			"cpu allocatable": status({ allocatable: { cpu: "64", memory: "30Gi", "kubernetes.io/batch-cpu": "1000" } }),
			"a resource added": status({ capacity: { cpu: "8", memory: "32Gi", "kubernetes.io/batch-cpu": "1000", "example.com/gpu": "8" } }),
			"a resource removed": status({ capacity: { cpu: "8", "kubernetes.io/batch-cpu": "1000" } }),
			"addresses": status({ addresses: [{ type: "InternalIP", address: "10.9.9.9" }] }),
			"kubelet endpoint": status({ daemonEndpoints: { kubeletEndpoint: { Port: 1 } } }),
			"node info": status({ nodeInfo: { kubeletVersion: "v9" } }),
			"phase": status({ phase: "Terminated" }),
			"images": status({ images: [{ names: ["evil"] }] }),
			"volumes in use": status({ volumesInUse: ["v"] }),
			"volumes attached": status({ volumesAttached: [{ name: "v", devicePath: "/dev/x" }] }),
			"config": status({ config: { error: "x" } }),
		};
		for (const [what, s] of Object.entries(cases)) no(run(patch(agent("n1"), "n1", status(), s)), what, /only its node's QoSletInterference/);
	});
	// A status write of a built-in kind keeps metadata changes (kubernetes/kubernetes#92022;
	// the node status strategy resets only spec): labels steer the scheduler and
	// workloads' node selectors, finalizers block the node's deletion.
	test("on its own node, no metadata change through the status", () => {
		const cond = status({ conditions: [ready, qos("True")] });
		const cases = {
			"a label added": { ...nodeMeta, labels: { ...nodeMeta.labels, "node-role.kubernetes.io/control-plane": "" } },
			"a label changed": { ...nodeMeta, labels: { "kubernetes.io/hostname": "evil" } },
			"labels removed": { annotations: nodeMeta.annotations },
			"an annotation added": { ...nodeMeta, annotations: { ...nodeMeta.annotations, "example.com/x": "1" } },
			"a finalizer added": { ...nodeMeta, finalizers: ["example.com/keep"] },
			"an owner added": { ...nodeMeta, ownerReferences: [{ apiVersion: "v1", kind: "Namespace", name: "x", uid: "u" }] },
		};
		for (const [what, m] of Object.entries(cases)) no(run(patch(agent("n1"), "n1", status(), cond, m)), what, /may not change its node's metadata/);
		// what the API server itself changes on every write is not the agent's
		ok(run(patch(agent("n1"), "n1", status(), cond, { ...nodeMeta, resourceVersion: "2", managedFields: [{ manager: "qoslet" }] })), "resourceVersion, managedFields");
	});
	test("other users are not its business", () => {
		const r = run(patch(KUBELET, "n2", status(), status({ conditions: [] })));
		assert.equal(r.skipped, true);
	});

	const event = (instance, controller = "qoslet.io/agent", regarding = { kind: "Pod", name: "p", namespace: "team-a" }) => ({
		apiVersion: "events.k8s.io/v1",
		kind: "Event",
		metadata: { name: "p.1", namespace: "team-a" },
		reportingController: controller,
		reportingInstance: instance,
		regarding,
		reason: "Interference",
		action: "Throttled",
		type: "Warning",
	});
	const eventReq = (userInfo, object, oldObject) => ({
		operation: oldObject ? "UPDATE" : "CREATE",
		resource: { group: "events.k8s.io", version: "v1", resource: "events" },
		namespace: "team-a",
		userInfo,
		object,
		oldObject,
	});
	test("Events: only as itself on its node", () => {
		ok(run(eventReq(agent("n1"), event("qoslet-n1"))), "own Event");
		ok(run(eventReq(agent("n1"), { ...event("qoslet-n1"), series: { count: 2 } }, event("qoslet-n1"))), "own series");
		no(run(eventReq(agent("n1"), event("qoslet-n2"))), "another node's instance", /may write only its own Events/);
		no(run(eventReq(agent("n1"), event("qoslet-n1", "kubelet"))), "another controller");
		no(run(eventReq(agent("n1"), event("qoslet-n1"), event("qoslet-n2"))), "another node's Event patched");
		no(run(eventReq(agent(null), event("qoslet-n1"))), "no node name");
	});
});

describe("qoslet-agent-own-node-pods", () => {
	const run = pair("qoslet-agent-own-node-pods");
	const podOn = (name, nodeName) => ({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "team-a" }, spec: nodeName ? { nodeName } : {} });
	const here = [podOn("a", "n1"), podOn("b", "n2"), podOn("pending", null)];
	const evict = (userInfo, name) => ({
		operation: "CREATE",
		resource: { group: "", version: "v1", resource: "pods" },
		subResource: "eviction",
		namespace: "team-a",
		name,
		userInfo,
		object: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace: "team-a" }, deleteOptions: { preconditions: { uid: "u" } } },
	});
	const event = (userInfo, regarding) => ({
		operation: "CREATE",
		resource: { group: "events.k8s.io", version: "v1", resource: "events" },
		namespace: "team-a",
		userInfo,
		object: { apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name: "e", namespace: "team-a" }, regarding },
	});

	test("evicts pods on its own node only", () => {
		assert.equal(run(evict(agent("n1"), "a"), here).allowed, true);
		const r = run(evict(agent("n1"), "b"), here);
		assert.equal(r.allowed, false);
		assert.deepEqual(r.errors, []);
		assert.match(r.messages[0], /only pods on the node its token names \(n1\); pod b runs on n2/);
		assert.match(run(evict(agent("n1"), "pending"), here).messages[0], /pod pending runs on no node/);
		assert.equal(run(evict(agent(null), "a"), here).allowed, false, "a token without a node");
		assert.equal(run(evict(agent("n1"), "a"), []).allowed, false, "a namespace without pods: no params, refused");
	});
	test("Events only about pods on its node", () => {
		assert.equal(run(event(agent("n1"), { kind: "Pod", name: "a" }), here).allowed, true);
		assert.equal(run(event(agent("n1"), { kind: "Pod", name: "b" }), here).allowed, false);
		// not about a pod: qoslet-agent-own-node still holds it to its own instance
		assert.equal(run(event(agent("n1"), { kind: "Node", name: "n2" }), here).allowed, true);
	});
	test("other users are not its business", () => {
		assert.equal(run(evict(TENANT, "b"), here).skipped, true);
	});
});

after(() => {
	// Every expression evaluated, with no error; every validation both passed and failed.
	const missing = [];
	for (const p of policies)
		for (const e of expressions(p)) {
			const got = seen.get(e.expr) ?? new Set();
			const want = e.validation ? ["true", "false"] : e.bool ? ["true"] : [];
			if (!got.size || got.has("error") || want.some((w) => !got.has(w)))
				missing.push(`${p.metadata.name} ${e.where}: seen [${[...got]}], want ${e.validation ? "true and false" : "a value"} and no error`);
		}
	assert.deepEqual(missing, []);
});
