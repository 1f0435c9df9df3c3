-- sbemu schema, version 4: one movable clock per namespace.
-- POST /$sbemu/clock/advance on any emulator raises offset_ms here and
-- NOTIFYs sbemu_clock; every emulator on the database follows, and a new one
-- starts from it, so N emulators on one database keep one time.
CREATE TABLE sbemu_clock (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    offset_ms   bigint NOT NULL DEFAULT 0 CHECK (offset_ms >= 0)
);
INSERT INTO sbemu_clock DEFAULT VALUES;
