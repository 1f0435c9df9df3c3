/* The forms the SDKs expect certain values in on the wire, which are no Service
 * Bus rules but how .NET shaped the protocol: a lock token as a delivery tag in
 * .NET Guid byte order, header.delivery-count one below DeliveryCount, and a
 * time in .NET ticks (com.microsoft:locked-until-utc). */
#ifndef AMQP_WIRE_FORMS_H
#define AMQP_WIRE_FORMS_H

#include <stdint.h>

/* Lock tokens are stored in RFC 4122 order; AMQP delivery tags carry them in
 * .NET Guid.ToByteArray() order (first three groups little-endian). The
 * conversion is its own inverse (wire-protocol §0 #11). */
void amqp_lock_token_swap(const uint8_t in[16], uint8_t out[16]);

/* header.delivery-count on the wire is DeliveryCount - 1 (0 on the first
 * delivery; wire-protocol §0 #16). */
uint32_t amqp_header_delivery_count(int32_t delivery_count);

/* A Unix time in ms as .NET ticks (100 ns since 0001-01-01 UTC). */
int64_t amqp_ticks_from_unix_ms(int64_t ms);

#endif
