/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof's JSON writer: compact documents on any FILE, with strings
 * from the guest made valid UTF-8 (json.c says how).
 */
#ifndef KVM_PVPROF_JSON_H
#define KVM_PVPROF_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Containers nest at most this deep (one bit of has_value each). */
#define JSON_MAX_DEPTH		63

/**
 * struct json_writer - one document being written
 * @f: where it goes
 * @depth: open containers
 * @has_value: per level, whether the container holds a value (a comma is due)
 * @after_name: a member name was written; its value comes without a comma
 */
struct json_writer {
	FILE *f;
	int depth;
	uint64_t has_value;
	bool after_name;
};

void json_init(struct json_writer *w, FILE *f);
void json_begin_object(struct json_writer *w);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w);
void json_end_array(struct json_writer *w);
void json_name(struct json_writer *w, const char *name);
void json_string(struct json_writer *w, const char *s);
void json_uint(struct json_writer *w, uint64_t v);
void json_int(struct json_writer *w, int64_t v);
void json_bool(struct json_writer *w, bool v);
void json_null(struct json_writer *w);
void json_fixed2(struct json_writer *w, double v);
int json_end_document(struct json_writer *w);

/* A member: the name, then the value (json_member_string() takes NULL as null). */
void json_member_string(struct json_writer *w, const char *name, const char *s);
void json_member_uint(struct json_writer *w, const char *name, uint64_t v);
void json_member_bool(struct json_writer *w, const char *name, bool v);

void json_write_string(FILE *f, const char *s);

#endif /* KVM_PVPROF_JSON_H */
