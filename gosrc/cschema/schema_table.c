// The held-schema table: the schema import cache (schema_cache.go), see gda.h.
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "gda.h"
#include "_cgo_export.h"

// ------------------------------------------------------------ the table
// Open addressing on the hash, twice as many slots as entries.
#define SLOTS (2 * GDA_HELD_SCHEMAS)
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static gda_held_schema* table[SLOTS];
static int table_count;
static int64_t table_bytes;

static void held_schema_unref(gda_held_schema* e) {
  if (atomic_fetch_sub(&e->refs, 1) == 1) {
    gdaHeldSchemaDropped(e->go_schema);
    e->tmpl.release(&e->tmpl);
    free(e);
  }
}

// The entry found last (with its own reference): a program exchanges the
// same schema again and again, and one comparison with it skips the hash.
static gda_held_schema* last_found;

static void table_clear_locked(void) {
  for (int i = 0; i < SLOTS; i++) {
    if (table[i]) held_schema_unref(table[i]);
    table[i] = NULL;
  }
  table_count = 0;
  table_bytes = 0;
  if (last_found) held_schema_unref(last_found);
  last_found = NULL;
}

void gda_held_schemas_clear(void) {
  pthread_mutex_lock(&table_lock);
  table_clear_locked();
  pthread_mutex_unlock(&table_lock);
}

void gda_held_schemas_size(int64_t* entries, int64_t* bytes) {
  pthread_mutex_lock(&table_lock);
  *entries = table_count;
  *bytes = table_bytes;
  pthread_mutex_unlock(&table_lock);
}

// A record batch of leaf columns (no children, no dictionary, gated) with no
// metadata anywhere, or one such leaf: all a producer's schema equality has
// to compare. pyarrow's compares metadata as a map (in any order) and ignores
// a list's child name, so deeper trees and metadata are left out.
static int is_flat(const struct ArrowSchema* s, int64_t n_nodes) {
  if (s->metadata || s->dictionary || n_nodes != s->n_children + 1) return 0;
  if (s->n_children == 0) return 1;
  if (strcmp(s->format, "+s") != 0) return 0;
  for (int64_t i = 0; i < s->n_children; i++) {
    const struct ArrowSchema* c = s->children[i];
    if (c->metadata || c->dictionary || c->n_children) return 0;
  }
  return 1;
}

int gda_held_schema_add(uint64_t hash, uintptr_t go_schema, const struct ArrowSchema* tmpl, int is_record_batch,
                        const gda_gate_node* nodes, int64_t n_nodes) {
  if (hash == 0 || n_nodes < 0) return EINVAL;
  // every copy of the schema the cache keeps alive counts: the metadata of a
  // schema is kept three times over, and a budget in entries alone let 256
  // entries of 256 MiB of metadata each stay after the user dropped them
  int64_t bytes = GDA_HELD_SCHEMA_COPIES * gda_schema_template_bytes(tmpl) + (int64_t)sizeof(gda_held_schema) +
                  n_nodes * (int64_t)sizeof(gda_gate_node);
  if (bytes > GDA_HELD_SCHEMA_BYTES) return EFBIG;  // imported afresh each time instead
  gda_held_schema* e = malloc(sizeof(*e) + (size_t)n_nodes * sizeof(gda_gate_node));
  if (!e) return ENOMEM;
  if (gda_schema_copy_uncounted(tmpl, &e->tmpl) != 0) {
    free(e);
    return ENOMEM;
  }
  atomic_init(&e->refs, 1);
  e->hash = hash;
  e->go_schema = go_schema;
  e->is_record_batch = is_record_batch;
  e->n_nodes = n_nodes;
  e->bytes = bytes;
  e->flat = is_flat(&e->tmpl, n_nodes);
  if (n_nodes) memcpy(e->nodes, nodes, (size_t)n_nodes * sizeof(gda_gate_node));
  pthread_mutex_lock(&table_lock);
  if (table_count >= GDA_HELD_SCHEMAS || table_bytes > GDA_HELD_SCHEMA_BYTES - bytes) table_clear_locked();
  size_t i = (size_t)(hash % SLOTS);
  while (table[i] && table[i]->hash != hash) i = (i + 1) % SLOTS;
  if (table[i]) {
    table_bytes -= table[i]->bytes;
    held_schema_unref(table[i]);  // same hash: the newer schema wins, as in the Go cache
  } else {
    table_count++;
  }
  table_bytes += bytes;
  table[i] = e;
  pthread_mutex_unlock(&table_lock);
  return 0;
}

// The held schema matching the foreign tree s, with a reference, or NULL;
// *hash_out is s's hash (0: s is not cacheable), when asked for.
gda_held_schema* gda_held_schema_lookup(const struct ArrowSchema* s, uint64_t* hash_out) {
  pthread_mutex_lock(&table_lock);
  gda_held_schema* last = last_found;
  if (last) atomic_fetch_add(&last->refs, 1);
  pthread_mutex_unlock(&table_lock);
  if (last) {
    if (gda_schema_matches(s, &last->tmpl)) {
      if (hash_out) *hash_out = last->hash;
      return last;
    }
    held_schema_unref(last);
  }
  uint64_t hash = gda_schema_hash(s);
  if (hash_out) *hash_out = hash;
  if (hash == 0) return NULL;
  gda_held_schema* found = NULL;
  pthread_mutex_lock(&table_lock);
  for (size_t i = (size_t)(hash % SLOTS); table[i]; i = (i + 1) % SLOTS) {
    if (table[i]->hash == hash) {
      found = table[i];
      atomic_fetch_add(&found->refs, 2);  // the caller's and last_found's
      break;
    }
  }
  pthread_mutex_unlock(&table_lock);
  if (!found) return NULL;
  if (!gda_schema_matches(s, &found->tmpl)) {
    held_schema_unref(found);
    held_schema_unref(found);
    return NULL;
  }
  pthread_mutex_lock(&table_lock);
  gda_held_schema* old = last_found;
  last_found = found;
  pthread_mutex_unlock(&table_lock);
  if (old) held_schema_unref(old);
  return found;
}


void gda_held_schema_ref(gda_held_schema* e) { atomic_fetch_add(&e->refs, 1); }
void gda_held_schema_unref(gda_held_schema* e) { held_schema_unref(e); }

gda_held_schema* gda_held_schema_find(const struct ArrowSchema* schema, uint64_t* hash) {
  *hash = 0;
  return schema && schema->release ? gda_held_schema_lookup(schema, hash) : NULL;
}
uintptr_t gda_held_schema_go(const gda_held_schema* e) { return e->go_schema; }
