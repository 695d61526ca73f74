// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "config/node_selector.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *label_problem(const char *s)
{
	static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789-_.";
	size_t key = strcspn(s, "="), slash = strcspn(s, "/");
	const char *name = slash < key ? s + slash + 1 : s, *value = s + key + (s[key] == '=');
	size_t name_len = (size_t)(s + key - name), value_len = strlen(value);

	if (!*s)
		return NULL;
	if (slash < key && (!slash || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-.") != slash))
		return "has an invalid key prefix (a DNS subdomain before '/')";
	if (!name_len || name_len > 63 || strspn(name, name_chars) < name_len)
		return "has an invalid key name (1 to 63 letters, digits, '-', '_', '.')";
	if (value_len > 63 || strspn(value, name_chars) != value_len)
		return "has an invalid value (at most 63 letters, digits, '-', '_', '.')";
	return NULL;
}

static const char *const operators[] = {"In", "NotIn", "Exists", "DoesNotExist", NULL};

/* Why key=value (value NULL: the key alone) is no label, or NULL. */
static const char *pair_problem(const char *key, const char *value)
{
	char s[512];

	if (!key[0])
		return "has an empty key";
	if ((size_t)snprintf(s, sizeof(s), "%s%s%s", key, value ? "=" : "", value ? value : "") >=
	    sizeof(s))
		return "is too long";
	return label_problem(s);
}

static int check_labels(const json_t *m, char *err, size_t errlen)
{
	const char *key, *why;
	json_t *v;

	if (!json_is_object(m)) {
		snprintf(err, errlen, "matchLabels: expected an object of label values");
		return -EINVAL;
	}
	json_object_foreach((json_t *)m, key, v)
	{
		if (!json_is_string(v)) {
			snprintf(err, errlen, "matchLabels.%s: expected a string", key);
			return -EINVAL;
		}
		if ((why = pair_problem(key, json_string_value(v)))) {
			snprintf(err, errlen, "matchLabels.%s: \"%s=%s\" %s", key, key,
				 json_string_value(v), why);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_expression(const json_t *e, size_t i, char *err, size_t errlen)
{
	const char *key = json_string_value(json_object_get(e, "key"));
	const char *op = json_string_value(json_object_get(e, "operator"));
	const json_t *values = json_object_get(e, "values"), *v;
	bool listed;
	const char *k, *why;
	size_t j, o;

	json_object_foreach((json_t *)e, k,
			    v) if (strcmp(k, "key") && strcmp(k, "operator") && strcmp(k, "values"))
	{
		snprintf(err, errlen,
			 "matchExpressions[%zu].%s: unknown key (allowed keys: key, "
			 "operator, values)",
			 i, k);
		return -EINVAL;
	}
	if (!key || (why = pair_problem(key, NULL))) {
		snprintf(err, errlen, "matchExpressions[%zu].key: %s", i,
			 key ? why : "missing (a label key)");
		return -EINVAL;
	}
	for (o = 0; op && operators[o] && strcmp(op, operators[o]); o++)
		;
	if (!op || !operators[o]) {
		snprintf(err, errlen,
			 "matchExpressions[%zu].operator: %s (allowed: In, NotIn, Exists, "
			 "DoesNotExist)",
			 i, op ? "unknown" : "missing");
		return -EINVAL;
	}
	listed = o < 2; /* In, NotIn */
	if (values && !json_is_array(values)) {
		snprintf(err, errlen, "matchExpressions[%zu].values: expected an array", i);
		return -EINVAL;
	}
	if (listed != (json_array_size(values) > 0)) {
		snprintf(err, errlen, "matchExpressions[%zu].values: %s with operator %s", i,
			 listed ? "needed (at least one)" : "not allowed", op);
		return -EINVAL;
	}
	json_array_foreach(values, j, v) if (!json_is_string(v) ||
					     (why = pair_problem(key, json_string_value(v))))
	{
		snprintf(err, errlen, "matchExpressions[%zu].values[%zu]: %s", i, j,
			 json_is_string(v) ? why : "expected a string");
		return -EINVAL;
	}
	return 0;
}

int node_selector_check(const json_t *sel, char *err, size_t errlen)
{
	const json_t *exprs = json_object_get(sel, "matchExpressions"), *e;
	const char *k;
	json_t *v;
	size_t i;

	if (!json_is_object(sel)) {
		snprintf(err, errlen, "expected an object (matchLabels, matchExpressions)");
		return -EINVAL;
	}
	json_object_foreach((json_t *)sel, k,
			    v) if (strcmp(k, "matchLabels") && strcmp(k, "matchExpressions"))
	{
		snprintf(err, errlen,
			 "%s: unknown key (allowed keys: matchLabels, matchExpressions)", k);
		return -EINVAL;
	}
	if (json_object_get(sel, "matchLabels") &&
	    check_labels(json_object_get(sel, "matchLabels"), err, errlen))
		return -EINVAL;
	if (exprs && !json_is_array(exprs)) {
		snprintf(err, errlen, "matchExpressions: expected an array");
		return -EINVAL;
	}
	json_array_foreach(exprs, i, e)
	{
		if (!json_is_object(e)) {
			snprintf(err, errlen, "matchExpressions[%zu]: expected an object", i);
			return -EINVAL;
		}
		if (check_expression(e, i, err, errlen))
			return -EINVAL;
	}
	return 0;
}

static bool expression_match(const json_t *e, const json_t *labels)
{
	const char *op = json_string_value(json_object_get(e, "operator"));
	const char *have = json_string_value(
		json_object_get(labels, json_string_value(json_object_get(e, "key"))));
	const json_t *v;
	bool in = false;
	size_t i;

	if (!strcmp(op, "Exists"))
		return have;
	if (!strcmp(op, "DoesNotExist"))
		return !have;
	json_array_foreach(json_object_get(e, "values"), i, v) in |=
		have && !strcmp(have, json_string_value(v));
	return !strcmp(op, "In") ? in : !in; /* NotIn: also when the label is absent */
}

bool node_selector_match(const json_t *sel, const json_t *labels)
{
	const json_t *v, *e;
	const char *key;
	size_t i;

	json_object_foreach((json_t *)json_object_get(sel, "matchLabels"), key, v)
	{
		const char *have = json_string_value(json_object_get(labels, key));

		if (!have || strcmp(have, json_string_value(v)))
			return false;
	}
	json_array_foreach(json_object_get(sel, "matchExpressions"), i,
			   e) if (!expression_match(e, labels)) return false;
	return true;
}
