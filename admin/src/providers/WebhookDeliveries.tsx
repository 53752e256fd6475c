/**
 * A provider's webhook deliveries, newest first, a page at a time (cursor paging: back is a stack
 * of page tokens), with the latest test events on the first page; each delivery's attempts, and
 * replay (delivered) or retry now (pending, failed or disabled).
 */
import { Button, Stack, TableCell, TableRow, Typography } from "@mui/material";
import { useCallback, useEffect, useState } from "react";
import { useNotify } from "react-admin";
import { Link } from "react-router-dom";
import { TestChip } from "../../../ui/src/components/chips.tsx";
import { DataTable } from "../../../ui/src/components/DataTable.tsx";
import { num, relative, resendLabel, when } from "../../../ui/src/format.ts";
import { api, data, type Schemas } from "../api.ts";
import { DeliveryDialog } from "./DeliveryDialog.tsx";
import { reason, useAct } from "./Panel.tsx";

type Delivery = Schemas["WebhookDelivery"];
type TestEvent = Schemas["WebhookAttempt"];
type DeliveryDetail = Schemas["WebhookDeliveryDetail"];

const DELIVERY_PAGE = 10;

/** A delivery's last answer in words. */
const answered = (d: { last_error: string | null; last_status_code: number | null }) =>
  d.last_error ?? (d.last_status_code !== null ? `HTTP ${d.last_status_code}` : "—");

/** The page shown: its deliveries (null while loading), the test events, and the tokens to move with. */
export function useDeliveries(id: number | undefined) {
  const notify = useNotify();
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [testEvents, setTestEvents] = useState<TestEvent[]>([]);
  // The page tokens of the pages before this one (cursor paging: back is a stack).
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const [nextToken, setNextToken] = useState<string | null>(null);
  const token = tokens[tokens.length - 1];
  const load = useCallback(async () => {
    if (id === undefined) return;
    try {
      const page = await data(
        api.GET("/api/v1/lead_providers/{id}/webhook_deliveries/", {
          params: { path: { id }, query: { page_size: DELIVERY_PAGE, ...(token && { page_token: token }) } },
        }),
      );
      setDeliveries(page.results);
      if (token === undefined) setTestEvents(page.test_events);
      setNextToken(page.next_page_token);
    } catch (err) {
      notify(reason(err), { type: "error" });
    }
  }, [id, notify, token]);
  useEffect(() => {
    void load();
  }, [load]);
  return { deliveries, testEvents, tokens, setTokens, nextToken, firstPage: token === undefined, load };
}

export function WebhookDeliveries({ id, page }: { id: number; page: ReturnType<typeof useDeliveries> }) {
  const notify = useNotify();
  const act = useAct();
  const [detail, setDetail] = useState<DeliveryDetail | null>(null);
  const { deliveries, testEvents, tokens, setTokens, nextToken } = page;
  const replay = (delivery: Delivery) =>
    act(async () => {
      await data(
        api.POST("/api/v1/lead_providers/{id}/webhook_deliveries/{delivery_id}/replay/", {
          params: { path: { id, delivery_id: delivery.id } },
        }),
      );
      notify(
        delivery.state === "pending"
          ? `Delivery ${delivery.id}: trying again now`
          : `Delivery ${delivery.id} queued again`,
        {
          type: "success",
        },
      );
      await page.load();
    });
  const open = (delivery: Delivery) =>
    act(async () =>
      setDetail(
        await data(
          api.GET("/api/v1/lead_providers/{id}/webhook_deliveries/{delivery_id}/", {
            params: { path: { id, delivery_id: delivery.id } },
          }),
        ),
      ),
    );

  return (
    <>
      <Typography component="h3" variant="subtitle1" sx={{ mt: 2 }}>
        Deliveries
      </Typography>
      {deliveries === null ? (
        <Typography variant="body2">Loading…</Typography>
      ) : deliveries.length === 0 && testEvents.length === 0 ? (
        <Typography variant="body2">None yet.</Typography>
      ) : (
        <DataTable
          label="Webhook deliveries"
          columns={[
            "Event",
            "Lead",
            "State",
            "Attempts",
            "Last answer",
            "Created",
            "Next attempt",
            { name: "Actions", hidden: true },
          ]}
        >
          {page.firstPage &&
            testEvents.map((e) => (
              <TableRow key={e.event_id}>
                <TableCell>
                  <Stack direction="row" spacing={1} alignItems="center">
                    <span>webhook.test</span>
                    <TestChip />
                  </Stack>
                </TableCell>
                <TableCell>—</TableCell>
                <TableCell>{e.error === null ? "delivered" : "not delivered"}</TableCell>
                <TableCell>1</TableCell>
                <TableCell>{e.error ?? `HTTP ${e.status_code} in ${num(e.latency_ms)} ms`}</TableCell>
                <TableCell>{when(e.at)}</TableCell>
                <TableCell>—</TableCell>
                <TableCell />
              </TableRow>
            ))}
          {deliveries.map((d) => (
            <TableRow key={d.id}>
              <TableCell>
                <Stack direction="row" spacing={1} alignItems="center">
                  <span>{d.type}</span>
                  {!d.livemode && <TestChip />}
                </Stack>
              </TableCell>
              <TableCell>
                {d.lead_id !== null ? (
                  <Link to={`/leads/${d.lead_id}/show`}>{d.order_number ?? `Lead ${d.lead_id}`}</Link>
                ) : (
                  "—"
                )}
              </TableCell>
              <TableCell>{d.state}</TableCell>
              <TableCell>{num(d.attempts)}</TableCell>
              <TableCell>{answered(d)}</TableCell>
              <TableCell>{when(d.created_at)}</TableCell>
              <TableCell>{d.next_attempt_at ? relative(d.next_attempt_at) : "—"}</TableCell>
              <TableCell>
                <Stack direction="row" spacing={0.5}>
                  <Button size="small" onClick={() => open(d)} aria-label={`Attempts of delivery ${d.id}`}>
                    Attempts
                  </Button>
                  <Button
                    size="small"
                    onClick={() => replay(d)}
                    aria-label={`${resendLabel(d.state)} delivery ${d.id}`}
                  >
                    {resendLabel(d.state)}
                  </Button>
                </Stack>
              </TableCell>
            </TableRow>
          ))}
        </DataTable>
      )}
      <Stack direction="row" spacing={1} justifyContent="flex-end" sx={{ mt: 1 }}>
        <Button size="small" disabled={tokens.length <= 1} onClick={() => setTokens((t) => t.slice(0, -1))}>
          Newer deliveries
        </Button>
        <Button size="small" disabled={!nextToken} onClick={() => nextToken && setTokens((t) => [...t, nextToken])}>
          Older deliveries
        </Button>
      </Stack>
      <DeliveryDialog detail={detail} onClose={() => setDetail(null)} />
    </>
  );
}
