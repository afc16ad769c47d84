"""What the app says: the response documents (pydantic), the number words, the article content, the research views."""
