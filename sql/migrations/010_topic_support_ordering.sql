-- A topic supports ordering unless it is told not to: Service Bus's default,
-- which the admin clients read back (supportOrdering: true). A topic inserted
-- with plain SQL gets the same default as one made through the management API.
-- Topics already made keep what they have.
ALTER TABLE topics ALTER COLUMN support_ordering SET DEFAULT true;
