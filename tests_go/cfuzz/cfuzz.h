#pragma once
#include <stddef.h>

#include "../../gosrc/include/arrow-c-abi.h"

long long cfz_releases(void);
void cfz_reset(void);
void cfz_build_schema(const unsigned char* data, size_t n, struct ArrowSchema* out);
int cfz_build_array(const unsigned char* data, size_t n, struct ArrowSchema* schema, struct ArrowArray* out);

// FuzzHostileTree's builder (tree.c): a schema and array of any layout; both
// live in an arena until cfz_tree_free.
void cfz_build_tree(const unsigned char* data, size_t n, struct ArrowSchema** schema, struct ArrowArray** array);
long long cfz_tree_releases(void);
void cfz_tree_free(void);
