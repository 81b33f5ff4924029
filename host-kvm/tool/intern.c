// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof's string interning: an open-addressing table of strdup()ed
 * strings, at most half full.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "intern.h"

struct intern_table {
	char **slots;
	uint32_t size;			/* power of two */
	uint32_t used;
};

static int strings_grow(struct intern_table *t)
{
	uint32_t size = t->size ? t->size * 2 : 1024, i;
	char **slots = calloc(size, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < t->size; i++) {
		uint64_t h;

		if (!t->slots[i])
			continue;
		h = hash_bytes(t->slots[i], strlen(t->slots[i]), HASH_INIT);
		while (slots[h & (size - 1)])
			h++;
		slots[h & (size - 1)] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->size = size;
	return 0;
}

/**
 * intern_new() - an empty table
 *
 * Return: the table, or NULL when out of memory.
 */
struct intern_table *intern_new(void)
{
	return calloc(1, sizeof(struct intern_table));
}

/**
 * intern() - the table's copy of a string
 * @t: the table
 * @s: the string, or NULL
 *
 * Return: the copy, the same pointer for the same text; NULL for NULL, or
 * when out of memory.
 */
const char *intern(struct intern_table *t, const char *s)
{
	uint64_t h;

	if (!s)
		return NULL;
	if ((t->used + 1) * 2 > t->size && strings_grow(t))
		return NULL;
	h = hash_bytes(s, strlen(s), HASH_INIT);
	for (;; h++) {
		char **slot = &t->slots[h & (t->size - 1)];

		if (!*slot) {
			*slot = strdup(s);
			if (!*slot)
				return NULL;
			t->used++;
			return *slot;
		}
		if (!strcmp(*slot, s))
			return *slot;
	}
}

/**
 * intern_free() - release a table and its strings
 * @t: the table, or NULL
 */
void intern_free(struct intern_table *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->size; i++)
		free(t->slots[i]);
	free(t->slots);
	free(t);
}
