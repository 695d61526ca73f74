# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A pod the size of a real one (a few KiB: labels, annotations, a container spec, status),
# for the benchmarks that load the API stand-in (newpod.sh, kube_scale.sh):
#   jq -nc --arg uid UID --arg name NAME --arg node NODE -f scripts/bench/kube_pod.jq
{
	metadata: {uid: $uid, namespace: "batch", name: $name, generateName: "crunch-",
	  labels: {app: "crunch", "pod-template-hash": "5d8f7c9b6d", team: "analytics"},
	  annotations: {"kubectl.kubernetes.io/restartedAt": "2026-11-28T12:00:00Z"},
	  ownerReferences: [{apiVersion: "apps/v1", kind: "ReplicaSet", name: "crunch-5d8f7c9b6d",
	    uid: "0d7c2f4e-1111-2222-3333-444455556666", controller: true, blockOwnerDeletion: true}],
	  creationTimestamp: "2026-11-28T12:00:00Z"},
	spec: {nodeName: $node, priority: 0, schedulerName: "default-scheduler",
	  serviceAccountName: "default", restartPolicy: "Always", dnsPolicy: "ClusterFirst",
	  terminationGracePeriodSeconds: 30,
	  containers: [{name: "main", image: "registry.example.com/analytics/crunch:1.42.0",
	    args: ["--input", "s3://bucket/path", "--threads", "2"],
	    env: [range(12) | {name: "VAR_\(.)", value: "value-number-\(.)-of-the-config"}],
	    resources: {}, imagePullPolicy: "IfNotPresent",
	    volumeMounts: [{name: "kube-api-access-x7k2p", readOnly: true,
	      mountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
	  tolerations: [{key: "node.kubernetes.io/not-ready", operator: "Exists",
	    effect: "NoExecute", tolerationSeconds: 300}],
	  volumes: [{name: "kube-api-access-x7k2p", projected: {defaultMode: 420, sources: [
	    {serviceAccountToken: {expirationSeconds: 3607, path: "token"}}]}}]},
	status: {phase: "Running", qosClass: "BestEffort", hostIP: "10.0.0.7", podIP: "10.244.1.9",
	  startTime: "2026-11-28T12:00:01Z",
	  conditions: [range(4) | {type: "Ready", status: "True",
	    lastTransitionTime: "2026-11-28T12:00:03Z"}],
	  containerStatuses: [{name: "main", ready: true, restartCount: 0, started: true,
	    image: "registry.example.com/analytics/crunch:1.42.0",
	    containerID: "containerd://\($uid | gsub("-"; ""))\($uid | gsub("-"; ""))"}]}}
