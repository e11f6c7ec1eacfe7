"""What the judgment stages share (bounds, sampling and the judging campaign sit on top of it): the published
relevance codes of the top-k lists, the prior p(e) that an unjudged (question, entity) item is relevant and its
features."""
