/*
 * p2o.c - what the exit codes of framing.md §8 mean. Owns the
 * permanent/temporary classification the supervisor restarts by; never
 * decides to exit itself.
 */
#include "p2o.h"

int
p2o_exit_permanent(int code)
{
	switch (code) {
	case P2O_EXIT_USAGE:
	case P2O_EXIT_DATA:
	case P2O_EXIT_CHECKPOINT:
	case P2O_EXIT_LOST:
	case P2O_EXIT_REFUSED:
	case P2O_EXIT_AUTH:
	case P2O_EXIT_CONFIG:
		return 1;
	default:
		/* 0 is not a failure; 1, 75 and anything unknown are worth
		 * a restart */
		return 0;
	}
}

const char *
p2o_exit_name(int code)
{
	switch (code) {
	case P2O_EXIT_OK:		return "ok";
	case P2O_EXIT_INTERNAL:		return "internal";
	case P2O_EXIT_USAGE:		return "usage";
	case P2O_EXIT_DATA:		return "data";
	case P2O_EXIT_CHECKPOINT:	return "checkpoint";
	case P2O_EXIT_LOST:		return "lost";
	case P2O_EXIT_REFUSED:		return "refused";
	case P2O_EXIT_TEMPFAIL:		return "tempfail";
	case P2O_EXIT_AUTH:		return "auth";
	case P2O_EXIT_CONFIG:		return "config";
	default:			return "unknown";
	}
}
