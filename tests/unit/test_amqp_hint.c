/* Where a walk of an entity's messages starts (amqp10/amqp_hint.c: the next
 * claim, or the next pick of a next available session): a walk's answer
 * raises the hint unless a rewind came while it was in the store, and no
 * higher than a session let go meanwhile; a session let go lowers it; a slot taken by another entity
 * starts that entity from 0; a rewind of every entity; one walk of an
 * entity in the store at a time (the claims' turns); a receive stamped as
 * activity at most once per ENT_ACTIVITY_STAMP_MS of the entity's clock. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "amqp_hint.h"
#include "ent_activity.h"

static amqp_hints picks;

static void found_raises_and_a_rewind_in_between_does_not(void **state)
{
    (void)state;
    amqp_hint_mark m1, m2;
    assert_int_equal(amqp_hint_from(&picks, 7, &m1), 0);
    amqp_hint_found(&picks, &m1, 100);
    assert_int_equal(amqp_hint_from(&picks, 7, &m1), 100);
    amqp_hint_found(&picks, &m1, 50); /* never lower by an answer */
    assert_int_equal(amqp_hint_from(&picks, 7, &m2), 100);
    amqp_hint_rewind(&picks, 7); /* while m2's pick is in the store */
    amqp_hint_found(&picks, &m2, 300);
    assert_int_equal(amqp_hint_from(&picks, 7, &m1), 0);
}

static void a_session_let_go_lowers(void **state)
{
    (void)state;
    amqp_hint_mark m;
    amqp_hint_rewind(&picks, 0);
    amqp_hint_from(&picks, 9, &m);
    amqp_hint_found(&picks, &m, 500);
    amqp_hint_from(&picks, 9, &m);
    amqp_hint_lower(&picks, 9, 200); /* a session picked by message 200 was let go */
    amqp_hint_found(&picks, &m, 900); /* a pick that may have skipped it */
    assert_int_equal(amqp_hint_from(&picks, 9, &m), 200);
    amqp_hint_lower(&picks, 9, 800); /* above the hint: it stays */
    assert_int_equal(amqp_hint_from(&picks, 9, &m), 200);
    amqp_hint_lower(&picks, 9, 0); /* a named session: from the start */
    assert_int_equal(amqp_hint_from(&picks, 9, &m), 0);
}

/* Eight receivers switching sessions: sessions are let go while nearly every
 * pick is in the store. An answer still raises the hint, as far as the
 * lowest session let go meanwhile; one that waited through more lowerings
 * than the slot keeps raises nothing. */
static void picks_overlapping_lowerings_still_raise(void **state)
{
    (void)state;
    amqp_hint_mark a, b, c;
    amqp_hint_rewind(&picks, 0);
    amqp_hint_from(&picks, 11, &a);
    amqp_hint_found(&picks, &a, 1000);
    amqp_hint_from(&picks, 11, &a); /* two picks in the store at once, from 1000 */
    amqp_hint_from(&picks, 11, &b);
    amqp_hint_lower(&picks, 11, 1003); /* sessions picked by 1003 and 1001 were let go */
    amqp_hint_lower(&picks, 11, 1001);
    amqp_hint_found(&picks, &a, 1008);
    assert_int_equal(amqp_hint_from(&picks, 11, &c), 1001);
    amqp_hint_found(&picks, &b, 1009); /* b saw the same lowerings */
    assert_int_equal(amqp_hint_from(&picks, 11, &c), 1001);
    amqp_hint_lower(&picks, 11, 1005); /* after b began: c is held below it */
    amqp_hint_found(&picks, &c, 1010);
    assert_int_equal(amqp_hint_from(&picks, 11, &a), 1005);
    amqp_hint_found(&picks, &a, 1012); /* nothing let go since a began */
    assert_int_equal(amqp_hint_from(&picks, 11, &b), 1012);
    for (int i = 0; i < AMQP_HINT_LOWERS_KEPT + 1; i++)
        amqp_hint_lower(&picks, 11, 2000 + i); /* above the hint; more than the slot keeps */
    amqp_hint_found(&picks, &b, 3000);
    assert_int_equal(amqp_hint_from(&picks, 11, &a), 1012);
    for (int i = 0; i < AMQP_HINT_LOWERS_KEPT; i++)
        amqp_hint_lower(&picks, 11, 2000 + i); /* as many as it keeps: the lowest caps the answer */
    amqp_hint_found(&picks, &a, 3000);
    assert_int_equal(amqp_hint_from(&picks, 11, &a), 2000);
}

static void entities_sharing_a_slot_and_a_rewind_of_all(void **state)
{
    (void)state;
    amqp_hint_mark a, b;
    int64_t e1 = 3, e2 = 3 + AMQP_HINT_SLOTS; /* the same slot */
    amqp_hint_from(&picks, e1, &a);
    amqp_hint_found(&picks, &a, 40);
    assert_int_equal(amqp_hint_from(&picks, e2, &b), 0); /* e2 takes the slot */
    amqp_hint_found(&picks, &a, 60);                     /* e1's answer no longer counts */
    amqp_hint_found(&picks, &b, 10);
    assert_int_equal(amqp_hint_from(&picks, e2, &b), 10);
    assert_int_equal(amqp_hint_from(&picks, e1, &a), 0); /* e1 back: from the start */
    amqp_hint_found(&picks, &a, 70);
    amqp_hint_lower(&picks, e2, 1); /* not e2's slot any more: nothing */
    assert_int_equal(amqp_hint_from(&picks, e1, &a), 70);
    amqp_hint_rewind(&picks, 0);
    assert_int_equal(amqp_hint_from(&picks, e1, &a), 0);
}

static void one_walk_of_an_entity_at_a_time(void **state)
{
    (void)state;
    static amqp_hints claims;
    assert_true(amqp_hint_walk_begin(&claims, 5));
    assert_true(amqp_hint_walk_busy(&claims, 5));
    assert_false(amqp_hint_walk_begin(&claims, 5)); /* a second claim of 5 waits */
    assert_true(amqp_hint_walk_begin(&claims, 6));  /* another entity's does not */
    amqp_hint_rewind(&claims, 5); /* a rewind moves where walks start, not whose turn it is */
    assert_true(amqp_hint_walk_busy(&claims, 5));
    amqp_hint_walk_end(&claims, 5);
    assert_false(amqp_hint_walk_busy(&claims, 5));
    assert_true(amqp_hint_walk_begin(&claims, 5));
    /* 5 + AMQP_HINT_SLOTS takes 5's slot: its walk may begin, and 5's end then leaves it alone */
    assert_true(amqp_hint_walk_begin(&claims, 5 + AMQP_HINT_SLOTS));
    amqp_hint_walk_end(&claims, 5);
    assert_true(amqp_hint_walk_busy(&claims, 5 + AMQP_HINT_SLOTS));
    assert_false(amqp_hint_walk_busy(&claims, 5));
}

static void a_receive_stamped_once_a_second(void **state)
{
    (void)state;
    static amqp_hints claims;
    const int64_t t = 1764300000000; /* a clock's milliseconds */
    assert_true(amqp_hint_stamp_due(&claims, 7, t)); /* the first receive this process saw */
    assert_false(amqp_hint_stamp_due(&claims, 7, t));
    assert_false(amqp_hint_stamp_due(&claims, 7, t + ENT_ACTIVITY_STAMP_MS - 1));
    assert_true(amqp_hint_stamp_due(&claims, 8, t)); /* another entity's are its own */
    assert_true(amqp_hint_stamp_due(&claims, 7, t + ENT_ACTIVITY_STAMP_MS));
    assert_false(amqp_hint_stamp_due(&claims, 7, t + ENT_ACTIVITY_STAMP_MS + 1));
    /* a clock moved forward (a test's advance of 6 minutes) stamps; one set back stamps too */
    assert_true(amqp_hint_stamp_due(&claims, 7, t + 360000));
    assert_true(amqp_hint_stamp_due(&claims, 7, t));
    /* a rewind is no stamp; 7 + AMQP_HINT_SLOTS taking 7's slot forgets 7's stamp (one more, never one less) */
    amqp_hint_rewind(&claims, 7);
    assert_false(amqp_hint_stamp_due(&claims, 7, t + 1));
    assert_true(amqp_hint_stamp_due(&claims, 7 + AMQP_HINT_SLOTS, t + 1));
    assert_true(amqp_hint_stamp_due(&claims, 7, t + 2));
}

/* A link's second claim goes ahead of its first only while the hint is as
 * the first found it (link_sender.c): both answers then move it with one
 * mark. A raise by an answer keeps the mark good; a rewind, a lowering or
 * another entity taking the slot does not. */
static void unmoved_until_a_rewind_a_lowering_or_another_entity(void **state)
{
    (void)state;
    amqp_hint_mark m, again;
    amqp_hint_rewind(&picks, 0);
    amqp_hint_from(&picks, 11, &m);
    assert_true(amqp_hint_unmoved(&picks, &m));
    amqp_hint_found(&picks, &m, 40); /* the first claim answered */
    assert_true(amqp_hint_unmoved(&picks, &m));
    assert_int_equal(amqp_hint_from(&picks, 11, &again), 40);
    assert_memory_equal(&m, &again, sizeof m);
    amqp_hint_rewind(&picks, 11);
    assert_false(amqp_hint_unmoved(&picks, &m));
    amqp_hint_from(&picks, 11, &m);
    amqp_hint_lower(&picks, 11, 5);
    assert_false(amqp_hint_unmoved(&picks, &m));
    amqp_hint_from(&picks, 11, &m);
    amqp_hint_from(&picks, 11 + AMQP_HINT_SLOTS, &again); /* shares its slot */
    assert_false(amqp_hint_unmoved(&picks, &m));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(found_raises_and_a_rewind_in_between_does_not),
        cmocka_unit_test(a_session_let_go_lowers),
        cmocka_unit_test(picks_overlapping_lowerings_still_raise),
        cmocka_unit_test(entities_sharing_a_slot_and_a_rewind_of_all),
        cmocka_unit_test(one_walk_of_an_entity_at_a_time),
        cmocka_unit_test(a_receive_stamped_once_a_second),
        cmocka_unit_test(unmoved_until_a_rewind_a_lowering_or_another_entity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
