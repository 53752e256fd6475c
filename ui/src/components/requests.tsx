/** A request log entry's outcomes, as the filters of both apps offer them. */
export const OUTCOMES = [
  { id: "accepted", name: "Accepted" },
  { id: "rejected", name: "Rejected" },
  { id: "rate_limited", name: "Rate limited" },
  { id: "failed", name: "Failed" },
];
