import { Button, Stack, Typography } from "@mui/material";
import { useListContext } from "react-admin";
import { num } from "../format.ts";

/**
 * Paging of a cursor-paged list: the rows shown and Previous / Next, never a total the service
 * does not count (react-admin's partial pagination, without its "of more than" guess).
 */
export function CursorPagination() {
  const { page, perPage, data, hasNextPage, hasPreviousPage, setPage, isPending } = useListContext();
  if (isPending) return null;
  const rows = data?.length ?? 0;
  const first = rows === 0 ? 0 : (page - 1) * perPage + 1;
  return (
    <Stack
      direction="row"
      alignItems="center"
      justifyContent="flex-end"
      spacing={1}
      sx={{ p: 1 }}
      flexWrap="wrap"
      useFlexGap
    >
      <Typography variant="body2" role="status">
        {rows === 0
          ? "No rows"
          : `Rows ${num(first)}–${num(first + rows - 1)}${hasNextPage ? ", more on the next page" : ""}`}
      </Typography>
      <Button size="small" disabled={!hasPreviousPage} onClick={() => setPage(page - 1)}>
        Previous page
      </Button>
      <Button size="small" disabled={!hasNextPage} onClick={() => setPage(page + 1)}>
        Next page
      </Button>
    </Stack>
  );
}
