/** The task queue conversations run on unless told otherwise. */
export const DEFAULT_TASK_QUEUE = 'yiem-agent';
