"""Progress lines of an asset's long work, in Dagster's run log and on the CLI's stderr."""

from dagster import AssetExecutionContext

from pipeline.core.progress import Progress, progress_log


def progress_lines(context: AssetExecutionContext) -> Progress:
    """A function that tells one line of progress to the run's log and to the progress logger (the
    CLI shows that one without reading Dagster's event log)."""

    def progress(message: str) -> None:
        context.log.info(message)
        progress_log().info(message)

    return progress
